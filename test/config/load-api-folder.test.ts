import { describe, expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';
import { loadApiFolder } from '../../src/deploy/api-yaml/load-api.js';

const temp = useTempDir('anvil-api-');
const put = temp.put;

const apiYaml = `key: users
before:
  CheckKey: { directive: CheckKey, expected: $.map.main.key, current: $.message.header.api-key }
endpoints:
  get /user/{id}:
    ReadUser: { directive: ReadUser, id: $.message.pathParam.id }
    Reply: { directive: ModifyMessage, headers: { content-type: application/json }, body: $.memory.user }
  all /requests:
    NotFound: { directive: ThrowError, status: 404, message: Page not found }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

describe('loadApiFolder', () => {
  it('loads a small valid folder with maps and custom directives', async () => {
    await put('api.yaml', apiYaml);
    await put('Maps/main.json', '{"key": "base", "limits": {"a": 1, "b": 2}}');
    await put('Maps/dev/main.json', '{"key": "dev-secret", "limits": {"b": 3}}');
    await put('Directives/ReadUser.js', 'export default function (state, config) {}\n');
    await put('Directives/Helper.ts', 'export default function () {}\n');
    await put('Directives/types.d.ts', 'export {};\n');
    await put('Directives/README.md', 'not a directive\n');

    const result = await loadApiFolder(temp.path(), 'dev');
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.customDirectives).toEqual(['Helper', 'ReadUser']);
    expect(result.maps).toEqual({ main: { key: 'dev-secret', limits: { a: 1, b: 3 } } });
    expect(result.definition.key).toBe('users');
    expect(result.definition.endpoints.map((e) => `${e.verb} ${e.path}`)).toEqual(['get /user/{id}', 'all /requests']);
    expect(result.definition.before[0]?.where).toEqual({ file: 'api.yaml', line: 3, column: 3 });
    expect(result.definition.after[0]?.groups).toEqual(['error_flow']);
  });

  it('reports a missing api.yaml at 1:1', async () => {
    const result = await loadApiFolder(temp.path(), 'dev');
    expect(result).toEqual({
      ok: false,
      errors: [
        { file: 'api.yaml', line: 1, column: 1, label: null, message: expect.stringContaining('api.yaml is missing') },
      ],
      warnings: [],
    });
  });

  it('refuses a custom directive named like a built-in, and a file name that is not a name', async () => {
    await put('api.yaml', 'key: users\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n');
    await put('Directives/Ping.js', 'export default function () {}\n');
    await put('Directives/my-directive.ts', 'export default function () {}\n');
    const result = await loadApiFolder(temp.path(), 'dev');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      {
        file: 'Directives/Ping.js',
        line: 1,
        column: 1,
        label: null,
        message: expect.stringContaining('"Ping" has the name of a built-in directive'),
      },
      {
        file: 'Directives/my-directive.ts',
        line: 1,
        column: 1,
        label: null,
        message: expect.stringContaining('no valid name'),
      },
    ]);
  });

  it('refuses the same custom directive as .js and .ts', async () => {
    await put('api.yaml', 'key: users\nendpoints:\n  get /x:\n    Go: { directive: Go }\n');
    await put('Directives/Go.js', 'export default function () {}\n');
    await put('Directives/Go.ts', 'export default function () {}\n');
    const result = await loadApiFolder(temp.path(), 'dev');
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.errors.map((e) => e.message)).toEqual([expect.stringContaining('"Go" is defined twice')]);
  });

  it('collects the errors of api.yaml, Maps and Directives together, api.yaml first', async () => {
    await put(
      'api.yaml',
      'key: users\nendpoints:\n  get /x:\n    Go: { directive: Pnig, v: $.map.main.a, w: $.map.other }\n',
    );
    await put('Maps/main.json', '{"a": }');
    await put('Directives/Log.js', 'export default function () {}\n');
    const result = await loadApiFolder(temp.path(), 'dev');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    // $.map.main is known even though its file is invalid; $.map.other is not.
    expect(result.errors.map((e) => [e.file, e.line, e.label])).toEqual([
      ['api.yaml', 4, 'get /x › Go'],
      ['api.yaml', 4, 'get /x › Go'],
      ['Directives/Log.js', 1, null],
      ['Maps/main.json', 1, null],
    ]);
    expect(result.errors[0]?.message).toContain('unknown directive "Pnig"');
    expect(result.errors[1]?.message).toContain('unknown map "other"');
  });

  it('refuses an api.yaml over 1 MiB', async () => {
    await put('api.yaml', `key: users\nendpoints: {}\n# ${'x'.repeat(1024 * 1024)}\n`);
    const result = await loadApiFolder(temp.path(), 'dev');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]?.message).toContain('larger than 1 MiB');
  });
});
