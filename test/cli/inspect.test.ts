import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp-dir.js';

// `anvil inspect <api-folder>`: every file that enters a release, in reading order, as one text
// dump with a header per file, or as JSON; binary files listed, not dumped.

const work = useTempDir('anvil-inspect-');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]);
const API_YAML = 'key: shop\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n';
const DIRECTIVE = 'export default function (state) { state.memory.set("n", 1); }\n';
const MIGRATION = 'create table items (id integer primary key);\n';

beforeEach(async () => {
  const put = work.put;
  await put('api.yaml', API_YAML);
  await put('Assets/db/001-items.sql', MIGRATION);
  await put('Assets/views/home.liquid', '<h1>{{ title }}</h1>');
  await put('Assets/css/site.css', 'body { margin: 0 }\n');
  await put('Directives/Count.ts', DIRECTIVE);
  await put('Maps/main.json', '{ "key": "k" }\n');
  await put('Maps/dev/main.json', '{ "key": "dev" }\n');
  await put('notes.txt', 'not part of a release\n');
  await put('api.postman_collection.json', '{}');
  writeFileSync(join(work.path(), 'Assets/images-logo.png'), PNG);
  mkdirSync(join(work.path(), 'Assets/images'));
  writeFileSync(join(work.path(), 'Assets/images/logo.png'), PNG);
  writeFileSync(join(work.path(), 'secret.txt'), 'outside the release\n');
  symlinkSync(join(work.path(), 'secret.txt'), join(work.path(), 'Assets/css/link.css'));
});

describe('anvil inspect', () => {
  it('dumps the release files in reading order, each under a header, binary files listed only', () => {
    const result = anvilCli(['inspect', work.path()], { env: { NO_COLOR: '1' } });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const headers = result.stdout.split('\n').filter((line) => line.startsWith('====='));
    expect(headers).toEqual([
      `===== api.yaml (${API_YAML.length} bytes) =====`,
      '===== Maps/dev/main.json (17 bytes) =====',
      '===== Maps/main.json (15 bytes) =====',
      `===== Directives/Count.ts (${DIRECTIVE.length} bytes) =====`,
      '===== Assets/views/home.liquid (20 bytes) =====',
      `===== Assets/db/001-items.sql (${MIGRATION.length} bytes) =====`,
      '===== Assets/css/site.css (19 bytes) =====',
      `===== Assets/images-logo.png (${PNG.length} bytes, binary: not shown) =====`,
      `===== Assets/images/logo.png (${PNG.length} bytes, binary: not shown) =====`,
    ]);
    expect(result.stdout.split('\n')[0]).toMatch(/: 9 files, \d+ bytes \(2 not shown\)$/);
    expect(result.stdout).toContain(
      `===== api.yaml (${API_YAML.length} bytes) =====\n${API_YAML}\n===== Maps/dev/main.json`,
    );
    // A text without a final newline still ends its section.
    expect(result.stdout).toContain('<h1>{{ title }}</h1>\n\n===== Assets/db/001-items.sql');
    for (const left of ['not part of a release', 'outside the release', 'PNG', 'postman'])
      expect(result.stdout).not.toContain(left);
  });

  it('prints a JSON array of {path, bytes, text} with --json, text null for binary files', () => {
    const result = anvilCli(['inspect', work.path(), '--json']);
    expect(result.status).toBe(0);
    const files = JSON.parse(result.stdout) as Array<{
      path: string;
      bytes: number;
      text: string | null;
      kind: string;
    }>;
    expect(files.map((f) => f.path)).toEqual([
      'api.yaml',
      'Maps/dev/main.json',
      'Maps/main.json',
      'Directives/Count.ts',
      'Assets/views/home.liquid',
      'Assets/db/001-items.sql',
      'Assets/css/site.css',
      'Assets/images-logo.png',
      'Assets/images/logo.png',
    ]);
    expect(files[0]).toEqual({ path: 'api.yaml', bytes: API_YAML.length, text: API_YAML, kind: 'text' });
    expect(files[8]).toEqual({ path: 'Assets/images/logo.png', bytes: PNG.length, text: null, kind: 'binary' });
  });

  it('refuses a folder without api.yaml, for a person and for a script', async () => {
    await work.put('empty/readme.md', 'nothing\n');
    const plain = anvilCli(['inspect', join(work.path(), 'empty')], { env: { NO_COLOR: '1' } });
    expect(plain.status).toBe(1);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/^error .*empty has no api\.yaml/);
    const json = anvilCli(['inspect', join(work.path(), 'empty'), '--json']);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: expect.stringContaining('has no api.yaml') });
  });
});
