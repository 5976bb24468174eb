/**
 * schema/api.schema.json against the validator (`anvil validate`): every example API it accepts,
 * the schema accepts; every broken fixture it refuses, the schema refuses too, except those whose
 * fault no JSON Schema can see (listed below, and in docs/decisions.md).
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv as AjvDraft07 } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { YAML_LIMITS } from '../../../src/shared/api-model/input-limits.js';
import { loadApiFolder, validateApiYaml } from '../../../src/deploy/api-yaml/load-api.js';
import { readYaml } from '../../../src/deploy/api-yaml/read-yaml.js';
import { builtinDirectives } from '../../../src/directives/catalogue.js';
import { apiJsonSchema } from '../../../src/deploy/reference/api-json-schema.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// strictSchema: an unknown keyword in the schema would be a typo editors silently ignore.
const ajv = new Ajv2020({
  allErrors: true,
  strictSchema: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
});
const checkSchema = ajv.compile(apiJsonSchema(builtinDirectives));

/** The parsed file, or null when it is not YAML the validator reads (a syntax error). */
function data(text: string): unknown {
  const reading = readYaml(text, YAML_LIMITS);
  return reading.ok ? reading.data : null;
}

function folders(parent: string): string[] {
  return readdirSync(join(root, parent), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, parent, e.name, 'api.yaml')))
    .map((e) => join(parent, e.name));
}

describe('schema/api.schema.json accepts every example API', () => {
  const examples = [...folders('apis'), ...folders('test/fixtures/spec-examples'), 'test/fixtures/original'];
  it.each(examples)('%s', async (folder) => {
    const loaded = await loadApiFolder(join(root, folder), 'dev');
    expect(loaded.ok ? [] : loaded.errors).toEqual([]);
    const valid = checkSchema(data(readFileSync(join(root, folder, 'api.yaml'), 'utf8')));
    expect(valid ? [] : checkSchema.errors).toEqual([]);
  });

  it('and every test fixture API the validator accepts', async () => {
    let accepted = 0;
    for (const folder of folders('test/fixtures/apis')) {
      const loaded = await loadApiFolder(join(root, folder), 'dev');
      if (!loaded.ok) continue;
      accepted++;
      expect(
        checkSchema(data(readFileSync(join(root, folder, 'api.yaml'), 'utf8'))) ? folder : [folder, checkSchema.errors],
      ).toBe(folder);
    }
    expect(accepted).toBeGreaterThan(10);
  });
});

/** Broken fixtures whose fault a JSON Schema of the file cannot see, and why. */
const NOT_EXPRESSIBLE: Record<string, string> = {
  'duplicate-label': 'a repeated YAML key: the parsed data the schema sees holds the last value only',
  'unknown-directive': 'a name of the custom directive form: the schema cannot list the files in Directives/',
  'unknown-directive-suggestion': 'the same: "Pnig" could be Directives/Pnig.js',
  'path-repeated-param': 'a path parameter named twice: a regular expression cannot compare the names',
  'duplicate-route-shape': 'two route keys of the same shape: a check across keys',
  'duplicate-route-trailing-slash': 'the same, with a trailing slash',
  'unknown-alias-form':
    'an alias is any string starting with "$.", where a string is accepted; its form is checked apart',
  'alias-in-list-bad-form': 'the same, in a list',
  'alias-unknown-map': 'a map the alias names must exist in Maps/: another file',
  'path-param-alias-not-in-path': 'a path parameter the alias reads must be in the route key: a check across fields',
};
/** Fixtures that are not YAML at all: an editor's YAML parser flags them, no schema is involved. */
const NOT_YAML = ['syntax-bad-indentation', 'syntax-unclosed-flow-map', 'tab-indentation'];

describe('schema/api.schema.json refuses the broken fixtures', () => {
  const dir = join(root, 'test/fixtures/broken-yaml');
  const fixtures = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
  const ctx = {
    file: 'api.yaml',
    mapNames: new Set(['main']),
    customDirectives: new Set(['ReadUser']),
    directives: builtinDirectives,
  };

  it.each(fixtures)('%s', (fixture) => {
    const text = readFileSync(join(dir, `${fixture}.yaml`), 'utf8');
    expect(validateApiYaml(text, ctx).errors.length).toBeGreaterThan(0);
    const parsed = readYaml(text, YAML_LIMITS);
    expect(parsed.ok).toBe(!NOT_YAML.includes(fixture));
    if (!parsed.ok) return;
    expect(checkSchema(parsed.data)).toBe(fixture in NOT_EXPRESSIBLE);
  });
});

describe('schema/api.schema.json and the validator agree', () => {
  const ctx = {
    file: 'api.yaml',
    mapNames: new Set(['main']),
    customDirectives: new Set(['MyOwn']),
    directives: builtinDirectives,
  };
  const cases: Array<[what: string, yaml: string]> = [
    ['a custom directive takes any parameters', 'MyOwn: { directive: MyOwn, anything: [1, { a: 2 }] }'],
    ['an unknown parameter of a built-in', 'Ping: { directive: Ping, foo: 1 }'],
    ['an alias where a number goes', 'Wait: { directive: Delay, ms: $.message.query.ms }'],
    ['a list where a number goes', 'Wait: { directive: Delay, ms: [1] }'],
    ['Concat elements by pattern', 'Join: { directive: Concat, target: x, element1: a, element2: $.memory.b }'],
    ['Concat: a name off the pattern', 'Join: { directive: Concat, target: x, elementA: a }'],
    [
      'ExecuteIf running a built-in with its parameters',
      'Maybe: { directive: ExecuteIf, if: $.memory.on, execute: ThrowError, status: 404 }',
    ],
    [
      'ExecuteIf: a parameter the built-in does not take',
      'Maybe: { directive: ExecuteIf, if: true, execute: Ping, status: 404 }',
    ],
    [
      'ExecuteIf: a parameter of the wrong type',
      'Maybe: { directive: ExecuteIf, if: true, execute: ThrowError, status: "404" }',
    ],
    ['ExecuteIf running a custom directive', 'Maybe: { directive: ExecuteIf, if: true, execute: MyOwn, whatever: 1 }'],
    [
      'ExecuteIf: the name from an alias',
      'Maybe: { directive: ExecuteIf, if: true, execute: $.memory.which, whatever: 1 }',
    ],
    ['DatabaseQuery without mode run needs target', 'Q: { directive: DatabaseQuery, sql: select 1 }'],
    ['DatabaseQuery with mode run', 'Q: { directive: DatabaseQuery, sql: delete from t, mode: run }'],
    ['groups in any case', 'Ping: { directive: Ping, groups: [Error_Flow, custom] }'],
    ['empty groups', 'Ping: { directive: Ping, groups: [] }'],
    ['a directive name no file can have', 'X: { directive: my-own }'],
  ];
  it.each(cases)('%s', (_what, entry) => {
    const text = `key: agree\nendpoints:\n  get /x:\n    ${entry}\n`;
    const validatorAccepts = validateApiYaml(text, ctx).errors.length === 0;
    expect(checkSchema(data(text))).toBe(validatorAccepts);
  });

  it('route keys and limits', () => {
    for (const [route, limits] of [
      ['GET /a/{b}/', '{ memoryMb: 64 }'],
      ['all /requests', '{ memoryMb: 4 }'],
      ['get /a b', '{}'],
      ['head /', '{ other: 1 }'],
    ] as const) {
      const text = `key: agree\nlimits: ${limits}\nendpoints:\n  ${route}:\n    Ping: { directive: Ping }\n`;
      expect(checkSchema(data(text)), text).toBe(validateApiYaml(text, ctx).errors.length === 0);
    }
  });
});

// yaml-language-server (VS Code's YAML extension) checks a schema against the draft-07 meta-schema
// whatever its $schema says, and knows draft-07's keywords: the schema keeps to them ($defs is a
// plain place for definitions there, reached by JSON pointer).
describe('schema/api.schema.json for draft-07 editors', () => {
  const schema = apiJsonSchema(builtinDirectives);
  const DRAFT_07 = new Set([
    '$schema',
    '$ref',
    '$defs',
    'title',
    'description',
    'default',
    'examples',
    'type',
    'enum',
    'const',
    'not',
    'anyOf',
    'allOf',
    'oneOf',
    'if',
    'then',
    'else',
    'properties',
    'patternProperties',
    'additionalProperties',
    'propertyNames',
    'required',
    'items',
    'minItems',
    'maxItems',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'minLength',
    'maxLength',
    'pattern',
    'writeOnly',
  ]);
  const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs']);
  const SCHEMA_ONE = new Set(['not', 'if', 'then', 'else', 'additionalProperties', 'propertyNames', 'items']);
  const SCHEMA_LISTS = new Set(['anyOf', 'allOf', 'oneOf']);

  function keywords(node: unknown, out: Set<string>): Set<string> {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return out;
    for (const [key, value] of Object.entries(node)) {
      out.add(key);
      if (SCHEMA_MAPS.has(key)) for (const sub of Object.values(value as object)) keywords(sub, out);
      else if (SCHEMA_ONE.has(key)) keywords(value, out);
      else if (SCHEMA_LISTS.has(key)) for (const sub of value as unknown[]) keywords(sub, out);
    }
    return out;
  }

  it('is valid against the draft-07 meta-schema', () => {
    const meta = new AjvDraft07({ strict: false }).getSchema('http://json-schema.org/draft-07/schema')!;
    expect(meta(schema) ? [] : meta.errors).toEqual([]);
  });

  it('uses only keywords draft-07 knows', () => {
    expect([...keywords(schema, new Set())].filter((k) => !DRAFT_07.has(k))).toEqual([]);
  });
});
