import { lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackTarGz, type UnpackLimits, type UnpackResult } from '../../../src/deploy/releases/unpack.js';
import { FUZZ_TEST_TIMEOUT_MS, fuzzParameters } from '../../helpers/fuzz-budget.js';
import { tarGz, type TarEntry, type TarEntryType } from '../../helpers/tarball.js';

// The deploy unpacker on random hostile archives: random entry names (`..`, absolute, NUL, long,
// unicode, case collisions, duplicates), types (links, devices, fifos), sizes and limits. Whatever
// the archive: nothing is written outside the destination, no link or device is ever created, the
// limits hold, a refused entry is named in the errors, and a refused unpack leaves nothing behind.

/** Stands for the absolute path of a folder beside the destination (filled in per run). */
const OUTSIDE = '<outside>';

const name = fc.oneof(
  fc.constantFrom(
    'api.yaml',
    'API.YAML',
    'Api.yaml',
    'Maps/main.json',
    'maps/Main.json',
    'Assets/a.txt',
    'Assets/',
    'Assets',
    'Directives/X.js',
    'x',
    'x/',
    'x/y',
    './x',
    'x//y',
    'x/./y',
    'x/../y',
    '../x',
    '../../x',
    'x/../../y',
    '..',
    '.',
    '/',
    '',
    `${OUTSIDE}/x`,
    `../outside/x`,
    'outside/../../outside/x',
    'a\\..\\b',
    'C:x',
    'x:stream',
    'a\u0000b',
    '\u0000',
    'caf\u00e9',
    'cafe\u0301',
    '\u202etxt.exe',
    '\u{1F600}',
    '._x',
    '.DS_Store',
    '__MACOSX/x',
    'PaxHeader/x',
    'x\n',
    'x\u007f',
  ),
  fc.string({ minLength: 1, maxLength: 8 }),
  fc
    .tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 300 }))
    .map(([depth, width]) => Array(depth).fill('d'.repeat(width)).join('/')),
);
const types: TarEntryType[] = ['file', 'file', 'file', 'dir', 'symlink', 'hardlink', 'chardev', 'blockdev', 'fifo'];
const entry = fc.record(
  {
    path: name,
    type: fc.constantFrom(...types),
    typeflag: fc.constantFrom('S', 'V', 'g', 'M', 'Z'),
    zeros: fc.integer({ min: 0, max: 3000 }),
    linkpath: fc.constantFrom('api.yaml', '../outside/x', OUTSIDE, '/etc/passwd', 'x'),
    pax: fc.record({ path: name }, { requiredKeys: [] }),
  },
  { requiredKeys: ['path', 'type'] },
);

const hostileArchive = fc.record({
  entries: fc.array(entry, { maxLength: 12 }),
  withApiYaml: fc.boolean(),
  limits: fc.record({
    maxUploadBytes: fc.constantFrom(200, 5_000, 1_000_000),
    maxUnpackedBytes: fc.constantFrom(0, 1_000, 10_000, 1_000_000),
    maxEntries: fc.integer({ min: 1, max: 20 }),
  }),
  cut: fc.option(fc.integer({ min: 1, max: 400 }), { freq: 6 }),
});

/**
 * Archives that should unpack (a few plain files under generous limits) take a quarter of the inputs
 * through the same checks: among random hostile ones an archive that passes is rare, and a
 * time-boxed run on a busy machine met none one time in a few dozen.
 */
const plainArchive = fc.record({
  entries: fc.uniqueArray(
    fc.record({
      path: fc.constantFrom('Maps/main.json', 'Assets/a.txt', 'Assets/b/c.txt', 'Directives/X.js', 'x', 'x/y'),
      type: fc.constant<TarEntryType>('file'),
      zeros: fc.integer({ min: 0, max: 3000 }),
    }),
    { maxLength: 4, selector: (e) => e.path },
  ),
  withApiYaml: fc.constant(true),
  limits: fc.constant({ maxUploadBytes: 1_000_000, maxUnpackedBytes: 1_000_000, maxEntries: 20 }),
  cut: fc.constant(null),
});

type Archive = typeof hostileArchive extends fc.Arbitrary<infer T> ? T : never;

const archive: fc.Arbitrary<Archive> = fc.oneof(
  { arbitrary: hostileArchive, weight: 3 },
  { arbitrary: plainArchive, weight: 1 },
);

let base: string;
let run = 0;
const seen = { ok: 0, refused: 0 };
beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'anvil-tar-fuzz-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Every path under `dir`, relative, with what lstat says it is. */
async function tree(dir: string): Promise<Array<{ rel: string; kind: string; size: number }>> {
  const out: Array<{ rel: string; kind: string; size: number }> = [];
  const walk = async (rel: string): Promise<void> => {
    for (const d of await readdir(path.join(dir, rel))) {
      const p = rel === '' ? d : `${rel}/${d}`;
      const st = await lstat(path.join(dir, p));
      const kind = st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
      out.push({ rel: p, kind, size: st.size });
      if (kind === 'dir') await walk(p);
    }
  };
  await walk('');
  return out;
}

/** The entries with `<outside>` replaced, each as the tar holds it. */
function concrete(input: Archive, outside: string): TarEntry[] {
  const fill = (s: string) => s.replaceAll(OUTSIDE, outside);
  const list: TarEntry[] = input.entries.map((e) => ({
    ...e,
    // With a pax path of its own, the ustar name must still fit its 100 bytes.
    path: e.pax?.path === undefined ? fill(e.path) : fitting(fill(e.path), 90),
    ...(e.linkpath !== undefined ? { linkpath: fill(e.linkpath).slice(0, 100) } : {}),
    ...(e.pax?.path !== undefined ? { pax: { path: fill(e.pax.path) } } : {}),
  }));
  return input.withApiYaml ? [{ path: 'api.yaml', content: 'key: k\n' }, ...list] : list;
}

function fitting(text: string, bytes: number): string {
  let out = text;
  while (Buffer.byteLength(out) > bytes) out = out.slice(0, -1);
  return out;
}

/** The path node-tar reads for an entry: a pax path wins (unless its record does not parse, a newline in it, say); either ends at its first NUL. */
function readPath(e: TarEntry): string {
  return (e.pax?.path ?? e.path).split('\u0000')[0]!;
}

/** Each path an entry may be named by: the one node-tar reads, or its ustar name (the helper cuts a long one to 90 characters). */
function possiblePaths(e: TarEntry): string[] {
  const ustar = Buffer.byteLength(e.path) > 100 ? e.path.slice(0, 90) : e.path;
  return [readPath(e), ustar.split('\u0000')[0]!];
}

const HOSTILE_TYPES = new Set<string>(['symlink', 'hardlink', 'chardev', 'blockdev', 'fifo']);

async function unpackOne(input: Archive): Promise<void> {
  run += 1;
  const root = path.join(base, String(run));
  const dest = path.join(root, 'dest');
  const outside = path.join(root, 'outside');
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(outside, 'keep'), 'untouched');
  const entries = concrete(input, outside);
  const whole = tarGz(entries);
  const bytes = input.cut === null ? whole : whole.subarray(0, Math.max(0, whole.length - input.cut));
  const limits: UnpackLimits = input.limits;

  const result: UnpackResult = await unpackTarGz(bytes, dest, limits);

  // Nothing beside the destination changed, whatever happened.
  expect((await tree(outside)).map((f) => f.rel)).toEqual(['keep']);
  expect((await readdir(root)).sort()).toEqual(result.ok ? ['dest', 'outside'] : ['outside']);
  seen[result.ok ? 'ok' : 'refused'] += 1;
  if (result.ok) {
    const written = await tree(dest);
    expect(
      written.filter((f) => f.kind === 'other'),
      'links, devices or fifos written',
    ).toEqual([]);
    const files = written.filter((f) => f.kind === 'file');
    expect(files.reduce((sum, f) => sum + f.size, 0)).toBe(result.bytes);
    expect(result.bytes).toBeLessThanOrEqual(limits.maxUnpackedBytes);
    expect(files.length).toBeLessThanOrEqual(limits.maxEntries);
    expect(bytes.length).toBeLessThanOrEqual(limits.maxUploadBytes);
    // A global pax header ('g') is a record about the entries after it, not an entry.
    const odd = entries.filter((e) =>
      e.typeflag === undefined ? HOSTILE_TYPES.has(e.type ?? 'file') : e.typeflag !== 'g',
    );
    expect(odd, 'a link, device or odd type was accepted').toEqual([]);
  } else {
    expect([400, 413, 415]).toContain(result.status);
    expect(result.errors.length).toBeGreaterThan(0);
    // A refusal of an entry names an entry of the archive.
    const paths = new Set(entries.flatMap(possiblePaths));
    for (const error of result.errors.filter((e) => e.startsWith('entry "'))) {
      const named = JSON.parse(/^entry ("(?:[^"\\]|\\.)*")/.exec(error)![1]!) as string;
      expect(paths.has(named), `${error} names no entry of ${JSON.stringify([...paths])}`).toBe(true);
    }
    // A link or device among few entries and generous limits is named with its reason.
    const size = (e: TarEntry) => e.zeros ?? Buffer.byteLength(e.content ?? '');
    const roomy =
      limits.maxEntries > entries.length &&
      limits.maxUploadBytes > whole.length &&
      entries.reduce((sum, e) => sum + size(e), 0) <= limits.maxUnpackedBytes &&
      input.cut === null;
    const hostile = entries.find((e) => HOSTILE_TYPES.has(e.type ?? 'file') && e.typeflag === undefined);
    // No header node-tar refuses (a link target on a file): that stops the unpack at once, and
    // node-tar warns before it hands over the entries it read ahead, so only that one is named.
    const isLink = (e: TarEntry) => e.typeflag === undefined && (e.type === 'symlink' || e.type === 'hardlink');
    const stops = entries.some((e) => e.linkpath !== undefined && !isLink(e) && e.typeflag !== 'g');
    if (roomy && hostile !== undefined && !stops) {
      expect(
        result.errors.some((e) => possiblePaths(hostile).some((p) => e.startsWith(`entry ${JSON.stringify(p)}: `))),
        JSON.stringify(result.errors),
      ).toBe(true);
    }
  }
  await rm(root, { recursive: true, force: true });
}

describe('the tar unpacker on random hostile archives', () => {
  it(
    'writes only inside the destination, never a link or device, within the limits, and names what it refuses',
    async () => {
      await fc.assert(fc.asyncProperty(archive, unpackOne), fuzzParameters(400));
      // The generator reaches both outcomes (else one half of the checks above never ran).
      expect(seen.ok).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
