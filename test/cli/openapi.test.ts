import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterEach, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';

const root = join(import.meta.dirname, '../..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-openapi-'));
  dirs.push(dir);
  return dir;
}

describe('anvil openapi / anvil import openapi', () => {
  it('prints the OpenAPI description of a folder, and writes it with --out', async () => {
    const printed = anvilCli(['openapi', join(root, 'apis/orders')]);
    expect(printed.stderr).toBe('');
    expect(printed.status).toBe(0);
    const document = JSON.parse(printed.stdout);
    expect(await new Validator().validate(document)).toMatchObject({ valid: true });
    expect(document.info.title).toBe('orders');

    const file = join(tempDir(), 'orders.json');
    expect(anvilCli(['openapi', join(root, 'apis/orders'), '--out', file]).status).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(document);
  });

  it('refuses a folder that does not validate, naming the file and line', () => {
    const folder = tempDir();
    writeFileSync(
      join(folder, 'api.yaml'),
      'key: bad\nendpoints:\n  get /x:\n    Nope: { directive: NoSuchDirective }\n',
    );
    const result = anvilCli(['openapi', folder]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/does not validate:\n {2}api\.yaml:4:\d+ \[get \/x › Nope\] .*NoSuchDirective/);
  });

  it('takes --json like every command: the description as before, a failure as {"ok": false, …}', () => {
    const printed = anvilCli(['openapi', join(root, 'apis/orders'), '--json']);
    expect(printed.status, printed.stderr).toBe(0);
    expect(JSON.parse(printed.stdout).info.title).toBe('orders');
    const folder = tempDir();
    writeFileSync(
      join(folder, 'api.yaml'),
      'key: bad\nendpoints:\n  get /x:\n    Nope: { directive: NoSuchDirective }\n',
    );
    const refused = anvilCli(['openapi', folder, '--json']);
    expect(refused.status).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      ok: false,
      error: expect.stringContaining('does not validate'),
    });
  });

  it('imports an OpenAPI document as a skeleton folder that validates, then exports the same operations', () => {
    const parent = tempDir();
    const imported = anvilCli([
      'import',
      'openapi',
      join(root, 'test/fixtures/openapi/petstore.yaml'),
      '--key',
      'pets',
      '--dir',
      parent,
      '--json',
    ]);
    expect(imported.status).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ ok: true, key: 'pets', endpoints: 5 });
    expect(anvilCli(['validate', join(parent, 'pets')]).status).toBe(0);
    const exported = JSON.parse(anvilCli(['openapi', join(parent, 'pets')]).stdout);
    expect(Object.keys(exported.paths).sort()).toEqual(['/pets', '/pets/{petId}', '/stores/{store_id}/orders']);

    const again = anvilCli([
      'import',
      'openapi',
      join(root, 'test/fixtures/openapi/petstore.yaml'),
      '--key',
      'pets',
      '--dir',
      parent,
    ]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('already exists and is not empty');
  });

  it('says what is wrong with a document it cannot import', () => {
    const spec = join(tempDir(), 'old.yaml');
    writeFileSync(spec, 'swagger: "2.0"\ninfo: { title: old }\npaths: {}\n');
    const result = anvilCli(['import', 'openapi', spec]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('"openapi" must be a 3.0.x or 3.1.x version, found Swagger 2.0');
    expect(anvilCli(['import', 'openapi', join(tempDir(), 'missing.yaml')]).stderr).toContain('ENOENT');
  });
});
