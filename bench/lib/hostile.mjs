// Hostile API folders for bench/edges.mjs, each aimed at one structural limit of a deploy (the same
// kinds as test/helpers/hostile-files.ts), and the .tar.gz a deploy sends.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { create } from 'tar';

const ping = (key) => `key: ${key}\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n`;

/** `count` routes in the one map `endpoints`. */
export function manyRoutes(key, count) {
  const lines = [`key: ${key}`, 'endpoints:'];
  for (let i = 0; i < count; i++) lines.push(`  get /r${i}: { P: { directive: Ping } }`);
  return `${lines.join('\n')}\n`;
}

/** A body of `levels` nested flow lists. */
export function deepNesting(key, levels) {
  return `key: ${key}\nendpoints:\n  get /x:\n    Reply: { directive: ModifyMessage, body: ${'['.repeat(levels)}${']'.repeat(levels)} }\n`;
}

/** The billion laughs: nine levels of ten aliases each (10^9 values once expanded). */
export function aliasBomb(key) {
  const names = 'abcdefghi'.split('');
  const lines = [
    `key: ${key}`,
    'endpoints:',
    '  get /x:',
    '    Reply:',
    '      directive: ModifyMessage',
    '      body:',
  ];
  lines.push(`        a: &a [${Array(10).fill('lol').join(', ')}]`);
  for (let i = 1; i < names.length; i++)
    lines.push(
      `        ${names[i]}: &${names[i]} [${Array(10)
        .fill(`*${names[i - 1]}`)
        .join(', ')}]`,
    );
  return `${lines.join('\n')}\n`;
}

/** What each phase of the benchmark deploys, and the status it must get. */
export const HOSTILE_KINDS = [
  {
    name: 'many keys: 20 000 routes in one map',
    status: 400,
    files: () => ({ 'api.yaml': manyRoutes('many-keys', 20_000) }),
  },
  { name: 'deep nesting: 400 000 levels', status: 400, files: () => ({ 'api.yaml': deepNesting('deep', 400_000) }) },
  { name: 'alias bomb: 10^9 values', status: 400, files: () => ({ 'api.yaml': aliasBomb('bomb') }) },
  {
    name: 'big Maps: 5 MiB',
    status: 400,
    files: () => ({
      'api.yaml': ping('big-maps'),
      'Maps/main.json': JSON.stringify({ filler: 'x'.repeat(5 * 1024 * 1024) }),
    }),
  },
  {
    name: 'deep Maps: 500 000 levels',
    status: 400,
    files: () => ({
      'api.yaml': ping('deep-maps'),
      'Maps/main.json': `${'{"a":'.repeat(500_000)}1${'}'.repeat(500_000)}`,
    }),
  },
  {
    name: 'wide Maps: 50 000 keys in one object',
    status: 400,
    files: () => ({
      'api.yaml': ping('wide-maps'),
      'Maps/main.json': JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]))),
    }),
  },
  {
    name: 'within the limits: 10 000 routes (deployed)',
    status: 201,
    files: () => ({ 'api.yaml': manyRoutes('large-but-valid', 10_000) }),
  },
];

/** The .tar.gz of a folder given as { relative path: content }. */
export function tarGz(files) {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-bench-hostile-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, 'api', path)), { recursive: true });
      writeFileSync(join(dir, 'api', path), content);
    }
    create(
      { gzip: true, cwd: join(dir, 'api'), file: join(dir, 'api.tar.gz'), sync: true, portable: true },
      Object.keys(files),
    );
    return readFileSync(join(dir, 'api.tar.gz'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
