import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import * as tarLib from 'tar';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  NO_API_YAML_ERROR,
  checkEntryPath,
  defaultUnpackLimits,
  unpackTarGz,
  type UnpackLimits,
  type UnpackResult,
} from '../../src/deploy/releases/unpack.js';
import { API_YAML, gzip, tar, tarGz, type TarEntry } from '../helpers/tarball.js';

let base: string;
let dest: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'anvil-unpack-'));
  dest = path.join(base, 'dest');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Every path under `dir`, relative, directories with a trailing '/'. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const d of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        out.push(`${p}/`);
        await walk(p);
      } else {
        out.push(p);
      }
    }
  };
  await walk('');
  return out.sort();
}

function failure(result: UnpackResult): { status: number; errors: string[] } {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
}

/** The unpack failed, with this status, nothing was left in dest and nothing was written next to it. */
async function expectRefused(
  result: UnpackResult,
  status: number,
  ...patterns: (string | RegExp)[]
): Promise<string[]> {
  const { status: got, errors } = failure(result);
  expect(got, JSON.stringify(errors)).toBe(status);
  for (const pattern of patterns) {
    expect(
      errors.some((e) => (typeof pattern === 'string' ? e.includes(pattern) : pattern.test(e))),
      `${String(pattern)} in ${JSON.stringify(errors)}`,
    ).toBe(true);
  }
  // dest was created by unpackTarGz, so it is removed; nothing else may exist under base.
  expect(await tree(base)).toEqual([]);
  return errors;
}

const smallLimits = (over: Partial<UnpackLimits> = {}): UnpackLimits => ({ ...defaultUnpackLimits, ...over });

describe('unpackTarGz: good archives', () => {
  it('unpacks files and directories with api.yaml at the top', async () => {
    const archive = tarGz({
      'api.yaml': API_YAML,
      'Maps/': '',
      'Maps/main.json': '{"a":1}',
      'Assets/views/index.liquid': '<h1>{{ title }}</h1>',
    });
    const result = await unpackTarGz(archive, dest);
    expect(result).toEqual({
      ok: true,
      root: dest,
      files: 3,
      bytes: Buffer.byteLength(API_YAML) + 7 + 20,
    });
    expect(await tree(base)).toEqual([
      'dest/',
      'dest/Assets/',
      'dest/Assets/views/',
      'dest/Assets/views/index.liquid',
      'dest/Maps/',
      'dest/Maps/main.json',
      'dest/api.yaml',
    ]);
    expect(await readFile(path.join(dest, 'api.yaml'), 'utf8')).toBe(API_YAML);
    expect(await readFile(path.join(dest, 'Maps/main.json'), 'utf8')).toBe('{"a":1}');
  });

  it('forces modes to 0644 / 0755 whatever the archive says (no setuid, no exec)', async () => {
    const archive = tarGz([
      { path: 'bin/', type: 'dir', mode: 0o7777 },
      { path: 'bin/run.sh', content: '#!/bin/sh\n', mode: 0o6755 },
      { path: 'api.yaml', content: API_YAML, mode: 0o000 },
      { path: 'secret/', type: 'dir', mode: 0o000 },
      { path: 'secret/x.json', content: '{}', mode: 0o4777 },
    ]);
    const result = await unpackTarGz(archive, dest);
    expect(result.ok).toBe(true);
    const mode = async (p: string): Promise<number> => (await lstat(path.join(dest, p))).mode & 0o7777;
    expect(await mode('.')).toBe(0o755);
    expect(await mode('bin')).toBe(0o755);
    expect(await mode('secret')).toBe(0o755);
    expect(await mode('bin/run.sh')).toBe(0o644);
    expect(await mode('api.yaml')).toBe(0o644);
    expect(await mode('secret/x.json')).toBe(0o644);
  });

  it('uses the single top-level folder as root (tar czf x.tgz myapi/)', async () => {
    const archive = tarGz({
      'myapi/': '',
      'myapi/api.yaml': API_YAML,
      'myapi/Maps/main.json': '{}',
    });
    const result = await unpackTarGz(archive, dest);
    expect(result).toEqual({
      ok: true,
      root: path.join(dest, 'myapi'),
      files: 2,
      bytes: Buffer.byteLength(API_YAML) + 2,
    });
  });

  it('accepts ./-prefixed entries (tar czf x.tgz -C myapi .)', async () => {
    const archive = tarGz({ './': '', './api.yaml': API_YAML, './Maps/': '', './Maps//a.json': '[]' });
    const result = await unpackTarGz(archive, dest);
    expect(result).toMatchObject({ ok: true, root: dest, files: 2 });
    expect(await tree(dest)).toEqual(['Maps/', 'Maps/a.json', 'api.yaml']);
  });

  it('unpacks an archive made by node-tar from a real folder, long (pax) names included', async () => {
    const src = path.join(base, 'src');
    const longDir = `Assets/${'d'.repeat(80)}/${'e'.repeat(80)}`;
    await mkdir(path.join(src, 'myapi', longDir), { recursive: true });
    await writeFile(path.join(src, 'myapi', 'api.yaml'), API_YAML);
    await writeFile(path.join(src, 'myapi', longDir, 'file.txt'), 'deep');
    const chunks: Buffer[] = [];
    for await (const c of tarLib.c({ gzip: true, cwd: src, portable: true }, ['myapi'])) chunks.push(c as Buffer);
    await rm(src, { recursive: true });

    const result = await unpackTarGz(Buffer.concat(chunks), dest);
    expect(result).toMatchObject({ ok: true, root: path.join(dest, 'myapi'), files: 2 });
    expect(await readFile(path.join(dest, 'myapi', longDir, 'file.txt'), 'utf8')).toBe('deep');
  });

  it('ignores macOS ._* / .DS_Store / PaxHeader metadata entries', async () => {
    const archive = tarGz([
      { path: '._myapi', content: 'apple double' },
      { path: 'myapi/', type: 'dir' },
      { path: 'myapi/._api.yaml', content: 'apple double' },
      { path: 'myapi/.DS_Store', content: 'finder' },
      { path: 'myapi/api.yaml', content: API_YAML },
      { path: 'PaxHeader/myapi', content: 'path=whatever' },
      { path: 'myapi/Maps/main.json', content: '{}', pax: { mtime: '1700000000.5', comment: 'pax record' } },
    ]);
    const result = await unpackTarGz(archive, dest);
    expect(result).toMatchObject({ ok: true, root: path.join(dest, 'myapi'), files: 2 });
    expect(await tree(base)).toEqual([
      'dest/',
      'dest/myapi/',
      'dest/myapi/Maps/',
      'dest/myapi/Maps/main.json',
      'dest/myapi/api.yaml',
    ]);
  });

  it('reads a stream in odd-sized chunks and large files with back-pressure', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4) big.writeUInt32LE((i * 2654435761) >>> 0, i);
    const archive = tarGz([
      { path: 'api.yaml', content: API_YAML },
      { path: 'Assets/a.bin', content: big },
      { path: 'Assets/empty.txt', content: '' },
      { path: 'Assets/b.bin', content: big.subarray(1000) },
    ]);
    const chunks: Buffer[] = [archive.subarray(0, 1), archive.subarray(1, 3)];
    for (let i = 3; i < archive.length; i += 7777) chunks.push(archive.subarray(i, i + 7777));
    const result = await unpackTarGz(Readable.from(chunks), dest);
    expect(result).toMatchObject({ ok: true, root: dest, files: 4 });
    const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
    expect(sha(await readFile(path.join(dest, 'Assets/a.bin')))).toBe(sha(big));
    expect(sha(await readFile(path.join(dest, 'Assets/b.bin')))).toBe(sha(big.subarray(1000)));
    expect((await readFile(path.join(dest, 'Assets/empty.txt'))).length).toBe(0);
  });

  it('unpacks 5000 entries (the default maximum)', async () => {
    const entries: TarEntry[] = [{ path: 'api.yaml', content: API_YAML }];
    for (let i = 1; i < 5000; i++) entries.push({ path: `Assets/d${i % 50}/f${i}.txt`, content: `file ${i}` });
    const started = Date.now();
    const result = await unpackTarGz(tarGz(entries), dest);
    expect(result).toMatchObject({ ok: true, root: dest, files: 5000 });
    expect(await readFile(path.join(dest, 'Assets/d7/f4007.txt'), 'utf8')).toBe('file 4007');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('uses an existing empty destDir and refuses a non-empty one', async () => {
    await mkdir(dest);
    expect((await unpackTarGz(tarGz({ 'api.yaml': API_YAML }), dest)).ok).toBe(true);
    await expect(unpackTarGz(tarGz({ 'api.yaml': API_YAML }), dest)).rejects.toThrow(/not empty/);
  });

  it('leaves an existing destDir empty on failure', async () => {
    await mkdir(dest);
    const result = await unpackTarGz(tarGz({ 'api.yaml': API_YAML, '../evil.js': 'x' }), dest);
    expect(failure(result).status).toBe(400);
    expect(await tree(base)).toEqual(['dest/']);
  });
});

describe('unpackTarGz: hostile entries are refused (400), nothing written anywhere', () => {
  const evilAbs = (): string => path.join(os.tmpdir(), `anvil-evil-${randomBytes(6).toString('hex')}`);

  it('refuses "../evil.js"', async () => {
    const result = await unpackTarGz(tarGz({ 'api.yaml': API_YAML, '../evil.js': 'pwned' }), dest);
    await expectRefused(result, 400, 'entry "../evil.js": path leaves the API folder');
    expect(existsSync(path.join(base, 'evil.js'))).toBe(false);
  });

  it('refuses "a/../../x" and "a/../b"', async () => {
    const result = await unpackTarGz(tarGz({ 'api.yaml': API_YAML, 'a/../../x': 'pwned', 'a/../b': 'meh' }), dest);
    const errors = await expectRefused(
      result,
      400,
      'entry "a/../../x": path leaves the API folder',
      'entry "a/../b": ".." is not allowed in paths',
    );
    expect(errors).toHaveLength(2);
    expect(existsSync(path.join(base, 'x'))).toBe(false);
  });

  it('refuses absolute paths', async () => {
    const target = evilAbs();
    const result = await unpackTarGz(
      tarGz({ 'api.yaml': API_YAML, [`${target}/x`]: 'pwned', '/etc/x': 'pwned' }),
      dest,
    );
    await expectRefused(
      result,
      400,
      `entry "${target}/x": absolute paths are not allowed`,
      'entry "/etc/x": absolute paths are not allowed',
    );
    expect(existsSync(target)).toBe(false);
  });

  it('refuses Windows drive letters and backslash tricks', async () => {
    const result = await unpackTarGz(
      tarGz({
        'api.yaml': API_YAML,
        '..\\evil.js': 'x',
        'C:\\Windows\\evil.js': 'x',
        'C:evil.js': 'x',
        'a\\..\\..\\b': 'x',
      }),
      dest,
    );
    await expectRefused(
      result,
      400,
      'entry "..\\\\evil.js": backslashes are not allowed in paths',
      'entry "C:\\\\Windows\\\\evil.js": backslashes are not allowed in paths',
      'entry "C:evil.js": drive letters and ":" are not allowed in paths',
      'entry "a\\\\..\\\\..\\\\b": backslashes',
    );
  });

  it('refuses a symlink, and never writes through it', async () => {
    const result = await unpackTarGz(
      tarGz([
        { path: 'api.yaml', content: API_YAML },
        { path: 'Assets/link', type: 'symlink', linkpath: '../..' },
        { path: 'Assets/link/pwned.txt', content: 'pwned' },
        { path: 'etc', type: 'symlink', linkpath: '/etc' },
      ]),
      dest,
    );
    await expectRefused(
      result,
      400,
      'entry "Assets/link": links are not allowed',
      'entry "etc": links are not allowed',
    );
    expect(existsSync(path.join(base, 'pwned.txt'))).toBe(false);
    expect(existsSync(path.join(os.tmpdir(), 'pwned.txt'))).toBe(false);
  });

  it('refuses a hard link', async () => {
    const result = await unpackTarGz(
      tarGz([
        { path: 'api.yaml', content: API_YAML },
        { path: 'passwd', type: 'hardlink', linkpath: '/etc/passwd' },
        { path: 'copy', type: 'hardlink', linkpath: 'api.yaml' },
      ]),
      dest,
    );
    await expectRefused(result, 400, 'entry "passwd": links are not allowed', 'entry "copy": links are not allowed');
  });

  it('refuses character devices, block devices and fifos', async () => {
    const result = await unpackTarGz(
      tarGz([
        { path: 'api.yaml', content: API_YAML },
        { path: 'null', type: 'chardev' },
        { path: 'sda', type: 'blockdev' },
        { path: 'pipe', type: 'fifo' },
      ]),
      dest,
    );
    const errors = await expectRefused(
      result,
      400,
      'entry "null": devices and fifos are not allowed',
      'entry "sda": devices and fifos are not allowed',
      'entry "pipe": devices and fifos are not allowed',
    );
    expect(errors).toHaveLength(3);
  });

  it('refuses entry types node-tar would silently ignore (sparse, volume header...)', async () => {
    const result = await unpackTarGz(
      tarGz([
        { path: 'api.yaml', content: API_YAML },
        { path: 'sparse.bin', typeflag: 'S', content: 'xx' },
        { path: 'volume', typeflag: 'V' },
      ]),
      dest,
    );
    await expectRefused(
      result,
      400,
      'entry "sparse.bin": entries of type "SparseFile" are not allowed',
      'entry "volume": entries of type',
    );
  });

  it('checks the path from a pax record, not the harmless-looking ustar name', async () => {
    const result = await unpackTarGz(
      tarGz([
        { path: 'api.yaml', content: API_YAML },
        { path: 'harmless.txt', content: 'pwned', pax: { path: '../evil.txt' } },
      ]),
      dest,
    );
    await expectRefused(result, 400, 'entry "../evil.txt": path leaves the API folder');
  });

  it('refuses duplicate and conflicting entries', async () => {
    const result = await unpackTarGz(
      tarGz([
        { path: 'api.yaml', content: API_YAML },
        { path: 'api.yaml', content: 'name: other' },
        { path: 'Maps', content: 'a file' },
        { path: 'Maps/x.json', content: '{}' },
        { path: 'Assets/', type: 'dir' },
        { path: 'Assets', content: 'a file over a dir' },
      ]),
      dest,
    );
    await expectRefused(
      result,
      400,
      'entry "api.yaml": appears more than once in the archive',
      'entry "Maps/x.json": conflicts with an earlier file entry',
      'entry "Assets": conflicts with an earlier directory entry',
    );
  });

  it('refuses control characters in names', async () => {
    const result = await unpackTarGz(tarGz({ 'api.yaml': API_YAML, 'a\nb.txt': 'x' }), dest);
    await expectRefused(result, 400, 'entry "a\\nb.txt": control characters are not allowed in paths');
  });

  it('lists every offender once an entry is refused', async () => {
    const result = await unpackTarGz(
      tarGz([
        { path: 'api.yaml', content: API_YAML },
        { path: '../one', content: 'x' },
        { path: 'fine.txt', content: 'x' },
        { path: 'two', type: 'symlink', linkpath: '/' },
        { path: '/three', content: 'x' },
      ]),
      dest,
    );
    const errors = await expectRefused(result, 400, '"../one"', '"two"', '"/three"');
    expect(errors).toHaveLength(3);
  });
});

describe('unpackTarGz: limits (413)', () => {
  it('refuses an upload over maxUploadBytes (buffer and stream)', async () => {
    const archive = tarGz({ 'api.yaml': API_YAML, 'noise.bin': randomBytes(8 * 1024) });
    const limits = smallLimits({ maxUploadBytes: 4096 });
    await expectRefused(await unpackTarGz(archive, dest, limits), 413, 'the upload is larger than 4096 bytes');

    const stream = new PassThrough();
    const pending = unpackTarGz(stream, dest, limits);
    for (let i = 0; i < archive.length; i += 1000) stream.write(archive.subarray(i, i + 1000));
    await expectRefused(await pending, 413, 'the upload is larger than 4096 bytes');
    expect(stream.destroyed).toBe(false); // the caller owns the source
  });

  it('refuses a decompression bomb (60 MiB of zeros, default limits)', async () => {
    const archive = tarGz([
      { path: 'api.yaml', content: API_YAML },
      { path: 'Assets/zeros.bin', zeros: 60 * 1024 * 1024 },
    ]);
    expect(archive.length).toBeLessThan(200 * 1024);
    const result = await unpackTarGz(archive, dest);
    await expectRefused(
      result,
      413,
      `entry "Assets/zeros.bin": the archive unpacks to more than ${50 * 1024 * 1024} bytes`,
    );
  });

  it('refuses a bomb spread over many small files', async () => {
    const entries: TarEntry[] = [{ path: 'api.yaml', content: API_YAML }];
    for (let i = 0; i < 100; i++) entries.push({ path: `Assets/f${i}.bin`, zeros: 20 * 1024 });
    const result = await unpackTarGz(tarGz(entries), dest, smallLimits({ maxUnpackedBytes: 1024 * 1024 }));
    await expectRefused(result, 413, /^entry "Assets\/f\d+\.bin": the archive unpacks to more than 1048576 bytes$/);
  });

  it('refuses endless padding after the tar end marker', async () => {
    const padded = Buffer.concat([tar([{ path: 'api.yaml', content: API_YAML }]), Buffer.alloc(8 * 1024 * 1024)]);
    const limits = smallLimits({ maxUnpackedBytes: 1024 * 1024, maxEntries: 10 });
    const result = await unpackTarGz(gzipSync(padded), dest, limits);
    await expectRefused(result, 413, /the archive expands to more than \d+ bytes/);
  });

  it('refuses more than maxEntries entries', async () => {
    const entries: TarEntry[] = [{ path: 'api.yaml', content: API_YAML }];
    for (let i = 0; i < 10; i++) entries.push({ path: `Maps/m${i}.json`, content: '{}' });
    const limits = smallLimits({ maxEntries: 10 });
    await expectRefused(await unpackTarGz(tarGz(entries), dest, limits), 413, 'the archive has more than 10 entries');
    // exactly at the limit is fine
    expect((await unpackTarGz(tarGz(entries.slice(0, 10)), dest, limits)).ok).toBe(true);
  });
});

describe('unpackTarGz: not a .tar.gz (400)', () => {
  it('refuses data that is not gzip', async () => {
    const result = await unpackTarGz(Buffer.from('PK\u0003\u0004 this is a zip, or anything else'), dest);
    await expectRefused(result, 400, 'the upload is not gzip-compressed: send the API folder as a .tar.gz');
  });

  it('refuses an uncompressed tar', async () => {
    const result = await unpackTarGz(tar([{ path: 'api.yaml', content: API_YAML }]), dest);
    await expectRefused(result, 400, /not gzip-compressed/);
  });

  it('refuses an empty upload', async () => {
    await expectRefused(await unpackTarGz(Buffer.alloc(0), dest), 400, 'the upload is empty');
    await expectRefused(await unpackTarGz(Readable.from([]), dest), 400, 'the upload is empty');
  });

  it('refuses gzip that is not a tar', async () => {
    await expectRefused(await unpackTarGz(gzip('just some text'), dest), 400, /^the archive is not a valid tar file/);
    await expectRefused(await unpackTarGz(gzip(randomBytes(4096)), dest), 400, /^the archive is not a valid tar file/);
  });

  it('refuses a truncated or corrupt gzip', async () => {
    const archive = tarGz({ 'api.yaml': API_YAML, 'noise.bin': randomBytes(4096) });
    const truncated = archive.subarray(0, Math.floor(archive.length / 2));
    await expectRefused(await unpackTarGz(truncated, dest), 400, /^the archive is corrupt \(gzip: /);
    const corrupt = Buffer.from(archive);
    corrupt.fill(0xff, 20, 200);
    await expectRefused(await unpackTarGz(corrupt, dest), 400, /^the archive is (corrupt|not a valid tar file)/);
  });

  it('names the entry whose header node-tar refuses (a device with a link target)', async () => {
    const archive = tarGz([
      { path: 'api.yaml', content: API_YAML },
      { path: 'dev', type: 'blockdev', linkpath: 'api.yaml' },
    ]);
    await expectRefused(
      await unpackTarGz(archive, dest),
      400,
      /^entry "dev": the archive is not a valid tar file: linkpath forbidden/,
    );
  });

  it('refuses a truncated tar inside valid gzip', async () => {
    const raw = tar([
      { path: 'api.yaml', content: API_YAML },
      { path: 'big.bin', zeros: 10_000 },
    ]);
    await expectRefused(
      await unpackTarGz(gzipSync(raw.subarray(0, 3000)), dest),
      400,
      /^entry "big.bin": the archive is not a valid tar file: Truncated input/,
    );
  });

  it('refuses a .tar.gz.gz', async () => {
    const result = await unpackTarGz(gzip(tarGz({ 'api.yaml': API_YAML })), dest);
    await expectRefused(result, 400, 'the archive is compressed twice; upload a single .tar.gz');
  });

  it('reports a failing source stream as a 400', async () => {
    const stream = new PassThrough();
    const pending = unpackTarGz(stream, dest);
    stream.write(tarGz({ 'api.yaml': API_YAML }).subarray(0, 10));
    stream.destroy(new Error('connection reset'));
    await expectRefused(await pending, 400, 'the upload failed: connection reset');
  });
});

describe('unpackTarGz: api.yaml location', () => {
  it('refuses an archive without api.yaml', async () => {
    const result = await unpackTarGz(tarGz({ 'Maps/main.json': '{}', 'README.md': 'hi' }), dest);
    await expectRefused(result, 400, NO_API_YAML_ERROR);
  });

  it('refuses api.yaml nested deeper than one folder', async () => {
    const result = await unpackTarGz(tarGz({ 'a/b/api.yaml': API_YAML }), dest);
    await expectRefused(result, 400, NO_API_YAML_ERROR);
  });

  it('refuses two top-level folders, or a folder next to other top-level files', async () => {
    await expectRefused(
      await unpackTarGz(tarGz({ 'a/api.yaml': API_YAML, 'b/api.yaml': API_YAML }), dest),
      400,
      NO_API_YAML_ERROR,
    );
    await expectRefused(
      await unpackTarGz(tarGz({ 'a/api.yaml': API_YAML, 'notes.txt': 'x' }), dest),
      400,
      NO_API_YAML_ERROR,
    );
  });

  it('refuses an api.yaml that is a directory', async () => {
    await expectRefused(await unpackTarGz(tarGz({ 'api.yaml/': '', 'api.yaml/x': 'y' }), dest), 400, NO_API_YAML_ERROR);
  });
});

describe('checkEntryPath', () => {
  it.each([
    ['api.yaml', ['api.yaml']],
    ['./a//b/./c/', ['a', 'b', 'c']],
    ['.', []],
  ])('accepts %j', (p, segments) => {
    expect(checkEntryPath(p)).toEqual({ segments });
  });

  it.each([
    ['', 'path is empty'],
    ['..', 'path leaves the API folder'],
    ['./../x', 'path leaves the API folder'],
    ['a/b/../../../x', 'path leaves the API folder'],
    ['//server/share', 'absolute paths are not allowed'],
    ['\\\\server\\share', 'backslashes are not allowed in paths'],
    ['C:/x', 'drive letters and ":" are not allowed in paths'],
    ['file.txt:stream', 'drive letters and ":" are not allowed in paths'],
    ['a\u0000b', 'control characters are not allowed in paths'],
    [`${'a'.repeat(256)}/x`, 'a path segment is longer than 255 bytes'],
    [`${'a/'.repeat(600)}x`, 'path is longer than 1024 bytes'],
  ])('refuses %j', (p, reason) => {
    expect(checkEntryPath(p)).toEqual({ reason });
  });
});
