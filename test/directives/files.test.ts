import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Reply } from '../helpers/instance.js';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { waitFor } from '../helpers/wait-for.js';

// SaveFile, ReadFile, DeleteFile, FileSize, CachedFileGet/Set (ORIGINAL.md, flaw 13 fixed): files
// live in `storage/` and `cache/` of the API's data dir, names are confined (400 for a name that
// could leave, 403 for a link that leads out), and the disk they take is counted against the API's
// quota (limits.filesKb, at most --max-files-bytes): 507, nothing written.

const fixture = join(import.meta.dirname, '../fixtures/apis/files');
const yaml = readFileSync(join(fixture, 'api.yaml'), 'utf8');
/** The same endpoints under another key, asking for a smaller quota. */
const tightApi = (key: string, kb: number) => ({
  'api.yaml': yaml.replace('key: files\n', `key: ${key}\nlimits: { filesKb: ${kb} }\n`),
});

let anvil: InProcessApis;
let dataDir: string;
let storage: string;

beforeAll(async () => {
  anvil = await startInProcess({
    apis: {
      files: fixture,
      tight: tightApi('tight', 16),
      crowd: tightApi('crowd', 16),
      greedy: tightApi('greedy', 1024),
    },
    quotas: { filesBytes: 256 * 1024 }, // --max-files-bytes 256KiB
  });
  dataDir = join(anvil.dataDir, 'localhost/dev/files');
  storage = join(dataDir, 'storage');
});
afterAll(async () => anvil?.dispose());

const post = (path: string, body: unknown): Promise<Reply> =>
  anvil.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const q = (name: string) => `name=${encodeURIComponent(name)}`;
const save = (name: string, content: unknown, api = 'files') => post(`/${api}/save`, { name, content });

describe('SaveFile, ReadFile, FileSize', () => {
  it('writes a text file, making its folders, and reads it back', async () => {
    expect((await save('notes/2024/may.txt', 'Café ☕\n')).status).toBe(201);
    expect(readFileSync(join(storage, 'notes/2024/may.txt'), 'utf8')).toBe('Café ☕\n');
    expect((await anvil.request(`/files/read?${q('notes/2024/may.txt')}`)).json()).toEqual({ content: 'Café ☕\n' });
    expect((await anvil.request(`/files/size?${q('notes/2024/may.txt')}`)).json()).toEqual({
      size: Buffer.byteLength('Café ☕\n'),
    });
  });

  it('writes maps and lists as JSON, read back as text or parsed', async () => {
    await save('data/user.json', { name: 'Ann', tags: ['a', 'b'] });
    expect(readFileSync(join(storage, 'data/user.json'), 'utf8')).toBe('{"name":"Ann","tags":["a","b"]}');
    expect((await anvil.request(`/files/read-json?${q('data/user.json')}`)).json()).toEqual({
      content: { name: 'Ann', tags: ['a', 'b'] },
    });
    expect((await anvil.request(`/files/read?${q('data/user.json')}`)).json()).toEqual({
      content: '{"name":"Ann","tags":["a","b"]}',
    });
    await save('data/not.json', 'plain {');
    const reply = await anvil.request(`/files/read-json?${q('data/not.json')}`);
    expect(reply.status).toBe(500);
  });

  it('round-trips binary content as base64, and replaces a file on a second write', async () => {
    const bytes = Buffer.from([0, 255, 16, 128, 13, 10, 0x89]);
    expect(
      (await post('/files/save-base64', { name: 'bin/pixel.bin', content: bytes.toString('base64') })).status,
    ).toBe(201);
    expect(readFileSync(join(storage, 'bin/pixel.bin'))).toEqual(bytes);
    expect((await anvil.request(`/files/read-base64?${q('bin/pixel.bin')}`)).json()).toEqual({
      content: bytes.toString('base64'),
    });
    await save('bin/pixel.bin', 'now text');
    expect((await anvil.request(`/files/read?${q('bin/pixel.bin')}`)).json()).toEqual({ content: 'now text' });
  });

  it('puts the files where ServeStatic storage: true serves them', async () => {
    await save('docs/readme.txt', 'served\n');
    const reply = await anvil.request('/files/served/readme.txt');
    expect([reply.status, reply.text]).toEqual([200, 'served\n']);
  });

  it('answers a missing file: ReadFile 404 naming it, FileSize null', async () => {
    const reply = await anvil.request(`/files/read?${q('nope/missing.txt')}`);
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: 'ReadFile: no file "nope/missing.txt"' });
    expect((await anvil.request(`/files/size?${q('nope/missing.txt')}`)).json()).toEqual({ size: null });
  });
});

describe('names are confined to the API folder', () => {
  const refused: Array<[string, string]> = [
    ['../escape.txt', 'climbs out of its folder'],
    ['a/../../escape.txt', 'climbs out of its folder'],
    ['/etc/passwd', 'absolute path'],
    ['C:/windows/x', 'absolute path'],
    ['a\\..\\escape.txt', 'backslash'],
    ['a\u0000b', 'NUL'],
    ['a//b', 'empty or "." segment'],
    ['./a', 'empty or "." segment'],
    ['dir/', 'empty or "." segment'],
    [`${'é'.repeat(128)}.txt`, 'longer than 255 bytes'],
  ];

  it('refuses names that could leave with 400 and the reason, for every directive', async () => {
    for (const [name, why] of refused) {
      for (const reply of [
        await save(name, 'x'),
        await anvil.request(`/files/read?${q(name)}`),
        await anvil.request(`/files/size?${q(name)}`),
        await anvil.request(`/files/file?${q(name)}`, { method: 'DELETE' }),
        await post('/files/cache', { name, content: 1, minutes: 1 }),
        await anvil.request(`/files/cache?${q(name)}`),
      ]) {
        expect(reply.status, name).toBe(400);
        expect(reply.json().error, name).toContain(`the file name ${JSON.stringify(name)} is refused`);
        expect(reply.json().error, name).toContain(why);
      }
    }
    const unnamed = await post('/files/save', { content: 'x' });
    expect([unnamed.status, unnamed.json()]).toEqual([
      400,
      { error: 'SaveFile: the file name "" is refused: it must be a non-empty text' },
    ]);
    expect(existsSync(join(dataDir, 'escape.txt'))).toBe(false);
    expect(existsSync(join(anvil.dataDir, 'localhost/dev/escape.txt'))).toBe(false);
  });

  it('refuses a link that leads out of the folder with 403, and never writes through one', async () => {
    mkdirSync(storage, { recursive: true });
    writeFileSync(join(dataDir, 'secret.txt'), 'the data dir itself\n');
    symlinkSync('/etc/passwd', join(storage, 'passwd.txt'));
    symlinkSync(dataDir, join(storage, 'up'));
    for (const reply of [
      await anvil.request(`/files/read?${q('passwd.txt')}`),
      await anvil.request(`/files/size?${q('passwd.txt')}`),
      await anvil.request(`/files/read?${q('up/secret.txt')}`),
      await save('up/planted.txt', 'x'),
      await save('passwd.txt', 'x'),
      await anvil.request(`/files/file?${q('passwd.txt')}`, { method: 'DELETE' }),
    ]) {
      expect(reply.status).toBe(403);
      expect(reply.json().error).toMatch(/leads outside the API's files/);
    }
    expect(existsSync(join(dataDir, 'planted.txt'))).toBe(false);
    expect(readFileSync(join(dataDir, 'secret.txt'), 'utf8')).toBe('the data dir itself\n');
    expect(existsSync(join(storage, 'passwd.txt'))).toBe(true);
  });

  it('keeps the database and logs out of reach: "db.sqlite" is a file of storage/', async () => {
    await save('db.sqlite', 'not the database');
    expect(readFileSync(join(storage, 'db.sqlite'), 'utf8')).toBe('not the database');
    expect(
      existsSync(join(dataDir, 'db.sqlite')) && readFileSync(join(dataDir, 'db.sqlite'), 'utf8') === 'not the database',
    ).toBe(false);
  });
});

describe('DeleteFile', () => {
  it('deletes a file and the folders that leaves empty', async () => {
    await save('trash/deep/one.txt', '1');
    await save('trash/two.txt', '2');
    expect((await anvil.request(`/files/file?${q('trash/deep/one.txt')}`, { method: 'DELETE' })).status).toBe(200);
    expect(existsSync(join(storage, 'trash/deep'))).toBe(false);
    expect(readdirSync(join(storage, 'trash'))).toEqual(['two.txt']);
  });

  it('ignores a missing file unless verify; then status and message, or a 404 naming it', async () => {
    expect((await anvil.request(`/files/file?${q('never.txt')}`, { method: 'DELETE' })).status).toBe(200);
    const custom = await anvil.request(`/files/verified?${q('never.txt')}`, { method: 'DELETE' });
    expect([custom.status, custom.json()]).toEqual([410, { error: 'Gone for good' }]);
    const plain = await anvil.request(`/files/verified-default?${q('never.txt')}`, { method: 'DELETE' });
    expect([plain.status, plain.json()]).toEqual([404, { error: 'DeleteFile: no file "never.txt"' }]);
    await save('kept.txt', 'k');
    expect((await anvil.request(`/files/verified?${q('kept.txt')}`, { method: 'DELETE' })).status).toBe(200);
    expect(existsSync(join(storage, 'kept.txt'))).toBe(false);
  });

  it('refuses to delete a folder (409)', async () => {
    await save('folder/inside.txt', 'x');
    const reply = await anvil.request(`/files/verified?${q('folder')}`, { method: 'DELETE' });
    expect(reply.status).toBe(409);
    expect(reply.json().error).toContain('is a folder');
  });
});

describe('CachedFileSet / CachedFileGet', () => {
  it('keeps a value until it expires, then answers null and removes it', async () => {
    expect((await post('/files/cache', { name: 'answers/one', content: { a: [1, 2] }, minutes: 5 })).status).toBe(201);
    expect((await anvil.request(`/files/cache?${q('answers/one')}`)).json()).toEqual({ value: { a: [1, 2] } });
    expect((await anvil.request(`/files/cache?${q('answers/none')}`)).json()).toEqual({ value: null });
    // Kept apart from storage/: ReadFile does not see it.
    expect((await anvil.request(`/files/read?${q('answers/one')}`)).status).toBe(404);

    await post('/files/cache', { name: 'answers/short', content: 'brief', minutes: 0.0005 });
    const file = join(dataDir, 'cache/answers/short');
    const expiresAt = statSync(file).mtimeMs;
    await waitFor(() => Date.now() > expiresAt + 5, { what: 'the cache entry to expire' });
    expect((await anvil.request(`/files/cache?${q('answers/short')}`)).json()).toEqual({ value: null });
    expect(existsSync(file)).toBe(false);
  });
});

describe('the disk quota (limits.filesKb, --max-files-bytes)', () => {
  const blocks = (n: number) => 'x'.repeat(n * 4096);

  it('counts each file in 4 KiB blocks and each folder as one; over the quota: 507, nothing written', async () => {
    // tight: 16 KiB = 4 blocks.
    expect((await save('a.txt', 'a', 'tight')).status).toBe(201);
    expect((await save('dir/b.txt', blocks(1), 'tight')).status).toBe(201); // folder + file: 2 blocks
    const refused = await save('c.txt', blocks(2), 'tight');
    expect(refused.status).toBe(507);
    expect(refused.json().error).toBe(
      "this write would make the API's files take 20480 bytes of disk, over its quota of 16384 bytes (api.yaml limits.filesKb, at most --max-files-bytes)",
    );
    expect(existsSync(join(anvil.dataDir, 'localhost/dev/tight/storage/c.txt'))).toBe(false);
    expect((await save('c.txt', 'c', 'tight')).status).toBe(201); // the last block
    // A write that does not grow passes; deleting frees room (the emptied folder too).
    expect((await save('dir/b.txt', 'smaller', 'tight')).status).toBe(201);
    expect((await save('d.txt', 'd', 'tight')).status).toBe(507);
    expect((await anvil.request(`/tight/file?${q('dir/b.txt')}`, { method: 'DELETE' })).status).toBe(200);
    expect((await save('d.txt', blocks(2), 'tight')).status).toBe(201);
  });

  it('is capped by the instance: an API asking for more gets --max-files-bytes', async () => {
    const reply = await save('big.bin', `${blocks(64)}!`, 'greedy');
    expect(reply.status).toBe(507);
    expect(reply.json().error).toContain('over its quota of 262144 bytes');
    expect((await save('fits.bin', blocks(63), 'greedy')).status).toBe(201);
  });

  it('admits exactly what fits when writes come together', async () => {
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => save(`many/${i}.txt`, String(i), 'crowd')));
    // 16 KiB: the folder and 3 files.
    expect(replies.filter((r) => r.status === 201)).toHaveLength(3);
    expect(replies.filter((r) => r.status === 507)).toHaveLength(21);
    expect(anvil.quotaRefusals('crowd', 'files_bytes')).toBe(21);
    expect(readdirSync(join(anvil.dataDir, 'localhost/dev/crowd/storage/many'))).toHaveLength(3);
  });

  it('sweeps expired cache entries before refusing a write', async () => {
    // tight is full (a.txt, c.txt, d.txt: 4 blocks). Free one block, fill it with a short-lived cache entry.
    expect((await anvil.request(`/tight/file?${q('a.txt')}`, { method: 'DELETE' })).status).toBe(200);
    expect((await post('/tight/cache', { name: 'soon', content: 1, minutes: 0.0005 })).status).toBe(201);
    const file = join(anvil.dataDir, 'localhost/dev/tight/cache/soon');
    const expiresAt = statSync(file).mtimeMs;
    await waitFor(() => Date.now() > expiresAt + 5, { what: 'the cache entry to expire' });
    expect((await save('e.txt', 'e', 'tight')).status).toBe(201);
    expect(existsSync(file)).toBe(false);
  });
});
