import { describe, expect, it } from 'vitest';
import { loadMaps } from '../../src/deploy/api-yaml/maps.js';
import { validateApiYaml } from '../../src/deploy/api-yaml/load-api.js';
import type { ValidateContext } from '../../src/deploy/api-yaml/validate-context.js';
import { builtinDirectives } from '../../src/directives/catalogue.js';
import {
  aliasBomb,
  bigJson,
  deepJson,
  deepNesting,
  manyAliases,
  manyRoutes,
  wideJson,
} from '../helpers/hostile-files.js';
import { useTempDir } from '../helpers/temp-dir.js';

// The structural limits of a deploy's files (docs/operate.md, Limits): each hostile file is refused with one
// error naming its line and the limit, before the work that would grow with it.

const ctx: ValidateContext = {
  file: 'api.yaml',
  mapNames: new Set(),
  customDirectives: new Set(),
  directives: builtinDirectives,
};
const validate = (text: string) => validateApiYaml(text, ctx);

function onlyError(text: string) {
  const { definition, errors } = validate(text);
  expect(definition).toBeNull();
  expect(errors).toHaveLength(1);
  return errors[0]!;
}

describe('api.yaml limits', () => {
  it('refuses more than 10000 keys in one map, at the first key over', () => {
    const error = onlyError(manyRoutes('wide', 20_000).text);
    expect(error).toMatchObject({ file: 'api.yaml', line: 10_003, column: 3 });
    expect(error.message).toBe('more than 10000 keys in one map: the limit is 10000 keys per map');
  });

  it('accepts 10000 keys in one map, and checks each route', () => {
    const routes = manyRoutes('wide', 10_000);
    expect(validate(routes.text).errors).toEqual([]);
    const broken = routes.text.replace(
      'get /r9999: { P: { directive: Ping } }',
      'get /r9999: { P: { directive: Pnig } }',
    );
    expect(validate(broken).errors).toEqual([
      {
        file: 'api.yaml',
        line: routes.lineOfKey(9999),
        column: 33,
        label: 'get /r9999 › P',
        message: 'unknown directive "Pnig" (did you mean "Ping"?)',
      },
    ]);
  });

  it('refuses nesting deeper than 64 levels, even 400 000 levels that would overflow a recursive parser', () => {
    for (const levels of [61, 400_000]) {
      const error = onlyError(deepNesting('deep', levels).text);
      expect(error).toMatchObject({ line: 4, label: null });
      expect(error.message).toBe('maps and lists nested deeper than 64 levels: the limit is 64');
    }
    expect(validate(deepNesting('deep', 60).text).errors).toEqual([]); // 4 levels above the body: 64 in all
  });

  it('refuses more than 100000 nodes', () => {
    const text = `key: many\nendpoints:\n  get /x:\n    Reply: { directive: ModifyMessage, body: [${Array(100_001).fill(1).join(',')}] }\n`;
    const error = onlyError(text);
    expect(error.line).toBe(4);
    expect(error.message).toBe('more than 100000 YAML nodes (keys, values, maps and lists): the limit is 100000');
  });

  it('refuses more than 100 aliases, at the alias over', () => {
    const hostile = manyAliases('aliases', 150);
    const error = onlyError(hostile.text);
    expect(error.line).toBe(hostile.line);
    expect(error.message).toBe('more than 100 aliases (*name) in the file: the limit is 100');
    expect(validate(manyAliases('aliases', 100).text).errors).toEqual([]);
  });

  it('refuses an alias bomb at the alias whose expansion passes the node limit', () => {
    const bomb = aliasBomb('bomb');
    const error = onlyError(bomb.text);
    expect(error).toMatchObject({ line: bomb.line, label: 'get /x › Reply' });
    expect(error.message).toBe('alias *d expands the file to more than 100000 YAML nodes: the limit is 100000');
  });

  it('refuses an alias that nests its value deeper than the limit', () => {
    // 5 levels down to the body, then 50 lists under the anchor, and the alias under 10 more.
    const text = `key: deep\nendpoints:\n  get /x:\n    Reply: { directive: ModifyMessage, body: { a: &deep ${'['.repeat(50)}1${']'.repeat(50)}, b: ${'['.repeat(10)}*deep${']'.repeat(10)} } }\n`;
    const error = onlyError(text);
    expect(error.line).toBe(4);
    expect(error.message).toBe('alias *deep nests maps and lists deeper than 64 levels: the limit is 64');
  });

  it('refuses an alias inside the value it names', () => {
    const line = '    Reply: &r { directive: ModifyMessage, body: *r }';
    const error = onlyError(`key: loop\nendpoints:\n  get /x:\n${line}\n`);
    expect(error).toMatchObject({ line: 4, column: line.indexOf('*r') + 1 });
    expect(error.message).toBe('alias *r is inside the value it names (&r): it would never end');
  });

  it('refuses an alias without an anchor before it, and a map or list as a key', () => {
    expect(onlyError('key: x\nendpoints:\n  get /x:\n    P: { directive: Ping, a: *nope }\n')).toMatchObject({
      line: 4,
      message: 'alias *nope names no anchor: &nope must come before it',
    });
    expect(onlyError('key: x\nendpoints:\n  ? [get, /x]\n  : P: { directive: Ping }\n')).toMatchObject({
      line: 3,
      message: 'a map key must be a single value (a name or a number), not a map or a list',
    });
  });

  it('still reads anchors and aliases the way YAML means them', () => {
    const text = [
      'key: shared',
      'before:',
      '  Check: &check { directive: CheckKey, expected: secret, current: $.message.header.api-key }',
      'endpoints:',
      '  get /a:',
      '    Reply: { directive: ModifyMessage, body: &body { ok: true, list: [1, 2] } }',
      '  get /b:',
      '    Check: *check',
      '    Reply: { directive: ModifyMessage, body: *body }',
      '  &route get /c:',
      '    Ping: { directive: Ping }',
      'after:',
      '  *route : { directive: Log }',
      '',
    ].join('\n');
    const { definition, errors } = validate(text);
    expect(errors).toEqual([]);
    expect(definition!.endpoints.map((e) => e.entries.map((entry) => [entry.label, entry.params]))).toEqual([
      [['Reply', { body: { ok: true, list: [1, 2] } }]],
      [
        ['Check', { expected: 'secret', current: '$.message.header.api-key' }],
        ['Reply', { body: { ok: true, list: [1, 2] } }],
      ],
      [['Ping', {}]],
    ]);
    expect(definition!.after.map((e) => e.label)).toEqual(['get /c']);
  });

  it('reports every duplicate key, and a second document', () => {
    const text =
      'key: dup\nendpoints:\n  get /x:\n    P: { directive: Ping }\n  get /x:\n    P: { directive: Ping }\n    P: { directive: Ping }\n';
    expect(validate(text).errors.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      '5:3 duplicate route "get /x": Map keys must be unique',
      '7:5 duplicate label "P" in "get /x": Map keys must be unique',
    ]);
    expect(validate('key: a\nendpoints: {}\n---\nkey: b\n').errors.map((e) => `${e.line} ${e.message}`)).toEqual([
      '3 a second YAML document starts here: the file must hold one',
    ]);
  });
});

describe('Maps limits', () => {
  const temp = useTempDir('anvil-maps-limits-');

  it('refuses a file nested deeper than 64 levels, 100 000 levels included', async () => {
    await temp.put('Maps/deep.json', deepJson(100_000));
    await temp.put('Maps/ok.json', deepJson(64));
    const { errors, maps } = await loadMaps(temp.path(), 'dev');
    expect(errors).toEqual([
      {
        file: 'Maps/deep.json',
        line: 1,
        column: 321,
        label: null,
        message: 'objects and arrays nested deeper than 64 levels: the limit is 64',
      },
    ]);
    expect(maps).toHaveProperty('ok');
  });

  it('refuses more than 10000 keys in one object, at the key over', async () => {
    await temp.put('Maps/dev/wide.json', wideJson(20_000));
    const { errors } = await loadMaps(temp.path(), 'dev');
    expect(errors).toEqual([
      {
        file: 'Maps/dev/wide.json',
        line: 10_002,
        column: 11,
        label: null,
        message: 'more than 10000 keys in one object: the limit is 10000 keys per object',
      },
    ]);
  });

  it('refuses Maps over 4 MiB together, naming the file that crosses the limit', async () => {
    await temp.put('Maps/a.json', bigJson(3 * 1024 * 1024));
    await temp.put('Maps/dev/b.json', bigJson(2 * 1024 * 1024));
    await temp.put('Maps/pro/c.json', bigJson(3 * 1024 * 1024)); // another env's: not read for dev
    const { errors, names } = await loadMaps(temp.path(), 'dev');
    expect(errors).toEqual([
      {
        file: 'Maps/dev/b.json',
        line: 1,
        column: 1,
        label: null,
        message: 'with Maps/dev/b.json, the Maps files come to more than 4 MiB: the limit is 4 MiB of Maps per release',
      },
    ]);
    expect(names).toEqual(['a', 'b']);
    expect((await loadMaps(temp.path(), 'pro')).errors).toHaveLength(1);
  });
});
