import { describe, expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';
import { deepMerge, loadMaps, parseJson } from '../../src/deploy/api-yaml/maps.js';

const temp = useTempDir('anvil-maps-');
const put = temp.put;

describe('loadMaps', () => {
  it('deep-merges Maps/<env>/*.json over Maps/*.json: objects merge, arrays and scalars replace', async () => {
    await put('Maps/main.json', {
      key: 'base-key',
      db: { host: 'localhost', port: 5432, options: { ssl: false, pool: 2 } },
      hosts: ['a', 'b', 'c'],
      keep: true,
    });
    await put('Maps/dev/main.json', { key: 'dev-key', db: { port: 6543, options: { ssl: true } }, hosts: ['z'] });
    const { maps, errors, names } = await loadMaps(temp.path(), 'dev');
    expect(errors).toEqual([]);
    expect(names).toEqual(['main']);
    expect(maps.main).toEqual({
      key: 'dev-key',
      db: { host: 'localhost', port: 6543, options: { ssl: true, pool: 2 } },
      hosts: ['z'],
      keep: true,
    });
  });

  it('uses only the folder of the env given and ignores other sub-folders', async () => {
    await put('Maps/main.json', { key: 'base' });
    await put('Maps/pro/main.json', { key: 'pro' });
    await put('Maps/pro/only-pro.json', { x: 1 });
    expect((await loadMaps(temp.path(), 'dev')).maps).toEqual({ main: { key: 'base' } });
    expect((await loadMaps(temp.path(), 'pro')).maps).toEqual({ main: { key: 'pro' }, 'only-pro': { x: 1 } });
  });

  it('takes an env file without a base file as it is', async () => {
    await put('Maps/dev/extra.json', { list: [1, 2], nested: { a: 1 } });
    const { maps, errors, names } = await loadMaps(temp.path(), 'dev');
    expect(errors).toEqual([]);
    expect(names).toEqual(['extra']);
    expect(maps).toEqual({ extra: { list: [1, 2], nested: { a: 1 } } });
  });

  it('replaces a base value of another type, and keeps non-object maps', async () => {
    await put('Maps/list.json', [1, 2, 3]);
    await put('Maps/dev/list.json', { now: 'an object' });
    await put('Maps/text.json', '"just a string"');
    const { maps } = await loadMaps(temp.path(), 'dev');
    expect(maps).toEqual({ list: { now: 'an object' }, text: 'just a string' });
  });

  it('has no maps when there is no Maps folder, and ignores files that are not .json', async () => {
    expect(await loadMaps(temp.path(), 'dev')).toEqual({ maps: {}, names: [], errors: [] });
    await put('Maps/readme.md', '# not a map');
    expect((await loadMaps(temp.path(), 'dev')).names).toEqual([]);
  });

  it('reports invalid JSON with file, line and column, and still names the map', async () => {
    await put('Maps/main.json', { ok: true });
    await put('Maps/dev/main.json', '{\n  "key": "dev",\n  "port": 80,\n}\n');
    await put('Maps/broken.json', '{\n  "a": [1, 2\n}');
    const { errors, names, maps } = await loadMaps(temp.path(), 'dev');
    expect(names).toEqual(['broken', 'main']);
    expect(maps).toEqual({});
    expect(errors).toEqual([
      { file: 'Maps/broken.json', line: 3, column: 1, label: null, message: expect.stringContaining('invalid JSON') },
      { file: 'Maps/dev/main.json', line: 4, column: 1, label: null, message: expect.stringContaining('invalid JSON') },
    ]);
    expect(errors[1]?.message).toContain('property name');
  });

  it('ignores an env that is not a plain folder name', async () => {
    await put('Maps/main.json', { key: 'base' });
    await put('main.json', { key: 'outside' });
    expect((await loadMaps(temp.path(), '..')).maps).toEqual({ main: { key: 'base' } });
  });
});

describe('parseJson', () => {
  it.each([
    ['{"a": }', 1, 7, 'expected a value'],
    ['{"a": 1', 1, 8, 'end of file'],
    ['{"a": 1}\n  x', 2, 3, 'unexpected character "x"'],
    ['{"a": 1} 2', 1, 10, 'after the end'],
    ['{"a": 1,}', 1, 9, 'expected a property name'],
    ['// note\n{}', 1, 1, 'comments are not allowed'],
    ['{\n  "a": "x\n}', 2, 8, 'unterminated string'],
    ['\uFEFF{"a": tru}', 1, 8, 'unexpected character "tru"'],
    ['', 1, 1, 'expected a value'],
  ])('%j fails at %i:%i', (text, line, column, fragment) => {
    const result = parseJson(text, 'Maps/x.json');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatchObject({ file: 'Maps/x.json', line, column, label: null });
      expect(result.error.message).toContain(fragment);
    }
  });

  it('parses valid JSON, also with a byte-order mark', () => {
    expect(parseJson('\uFEFF{"a": [1, "b", null]}', 'x.json')).toEqual({ ok: true, value: { a: [1, 'b', null] } });
  });
});

describe('deepMerge', () => {
  it('does not let a "__proto__" key change a prototype', () => {
    const merged = deepMerge({ a: 1 }, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(merged)).toEqual(['a', '__proto__']);
  });
});
