import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { schemaModeline } from '../../src/cli/templates/schema-modeline.js';
import { anvilCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp-dir.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const MODELINE = /^# yaml-language-server: \$schema=(\S+)\n/;

describe('anvil create-api names the JSON Schema of api.yaml for editors', () => {
  const work = useTempDir('anvil-create-schema-');

  it('outside the Anvil tree: the schema file URL, on the first line of a file the schema accepts', () => {
    const created = anvilCli(['create-api', 'orders'], { cwd: work.path(), env: { NO_COLOR: '1' } });
    expect(created.status, created.stderr).toBe(0);
    const text = readFileSync(join(work.path(), 'orders/api.yaml'), 'utf8');
    const where = MODELINE.exec(text)?.[1] ?? '';
    expect(where).toMatch(/^file:\/\/.*\/schema\/api\.schema\.json$/);
    const schemaFile = fileURLToPath(where);
    expect(resolve(schemaFile)).toBe(resolve(root, 'schema/api.schema.json'));

    const validate = new Ajv2020({ strict: false, allowUnionTypes: true }).compile(
      JSON.parse(readFileSync(schemaFile, 'utf8')) as object,
    );
    expect(validate(parse(text)) ? [] : validate.errors).toEqual([]);
    const validated = anvilCli(['validate', 'orders'], { cwd: work.path(), env: { NO_COLOR: '1' } });
    expect(validated.status, validated.stderr).toBe(0);
  });

  it('inside it (apis/<name>): a path relative to the folder', () => {
    const folder = join(root, 'apis', 'orders');
    const where = MODELINE.exec(schemaModeline(folder))?.[1] ?? '';
    expect(where).toBe('../../schema/api.schema.json');
    expect(existsSync(resolve(folder, where))).toBe(true);
  });
});
