import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateApiYaml } from '../../src/deploy/api-yaml/load-api.js';
import type { ValidateContext } from '../../src/deploy/api-yaml/validate-context.js';
import { builtinDirectives } from '../../src/directives/catalogue.js';

const fixtures = fileURLToPath(new URL('../fixtures/broken-yaml/', import.meta.url));

const ctx: ValidateContext = {
  file: 'api.yaml',
  mapNames: new Set(['main']),
  customDirectives: new Set(['ReadUser']),
  directives: builtinDirectives,
};

function validate(text: string, over: Partial<ValidateContext> = {}) {
  return validateApiYaml(text, { ...ctx, ...over });
}

interface Expected {
  line: number;
  label: string | null;
  /** A fragment the message must contain. */
  message: string;
}

/** Each fixture's first line is a comment saying what is broken; line numbers count it. */
const cases: Array<[fixture: string, errors: Expected[]]> = [
  ['syntax-unclosed-flow-map', [{ line: 6, label: 'get /ping › Ping', message: 'Flow map' }]],
  ['syntax-bad-indentation', [{ line: 6, label: 'get /ping › Ping', message: 'same column' }]],
  ['tab-indentation', [{ line: 5, label: null, message: 'Tabs are not allowed' }]],
  [
    'duplicate-label',
    [{ line: 6, label: 'get /ping › Ping', message: 'duplicate label "Ping" in "get /ping": Map keys must be unique' }],
  ],
  ['missing-key', [{ line: 2, label: null, message: 'missing required field "key"' }]],
  ['bad-key-pattern', [{ line: 2, label: null, message: 'key "My_API" is not valid' }]],
  ['reserved-key', [{ line: 2, label: null, message: 'key "anvil" is reserved' }]],
  ['unknown-top-level-field', [{ line: 3, label: null, message: 'unknown top-level field "version"' }]],
  ['missing-endpoints', [{ line: 2, label: null, message: 'missing required field "endpoints"' }]],
  ['endpoints-not-a-map', [{ line: 4, label: null, message: '"endpoints" must be a map' }]],
  [
    'endpoint-not-a-map',
    [{ line: 4, label: 'get /ping', message: 'endpoint "get /ping" must be a map of label to entry' }],
  ],
  [
    'entry-not-a-map',
    [{ line: 5, label: 'get /ping › Ping', message: 'entry "Ping" must be a map with a "directive" field' }],
  ],
  ['missing-directive', [{ line: 5, label: 'get /ping › Ping', message: 'missing field "directive" in entry "Ping"' }]],
  [
    'unknown-directive-suggestion',
    [{ line: 5, label: 'get /ping › Ping', message: 'unknown directive "Pnig" (did you mean "Ping"?)' }],
  ],
  ['unknown-directive', [{ line: 6, label: 'get /ping › Frob', message: 'unknown directive "Frobnicate"' }]],
  [
    'missing-required-param',
    [{ line: 4, label: 'before › CheckKey', message: 'parameter "expected" of CheckKey is required' }],
  ],
  ['unknown-param', [{ line: 7, label: 'get /ping › Ping', message: 'unknown parameter "foo" for Ping' }]],
  [
    'wrong-type-param',
    [{ line: 5, label: 'all /requests › NotFound', message: 'parameter "status" of ThrowError must be integer' }],
  ],
  [
    'out-of-range-param',
    [
      {
        line: 7,
        label: 'all /requests › NotFound',
        message: 'parameter "status" of ThrowError must be at most 599 (got 700)',
      },
    ],
  ],
  [
    'wrong-type-nested-param',
    [
      {
        line: 8,
        label: 'get /ping › Reply',
        message: 'parameter "headers.content-type" of ModifyMessage must be string, number, boolean or list',
      },
    ],
  ],
  ['groups-not-a-list', [{ line: 7, label: 'after › OnError', message: '"groups" of entry "OnError" must be a list' }]],
  ['debug-not-boolean', [{ line: 3, label: null, message: '"debug" must be true or false' }]],
  [
    'bad-verb',
    [{ line: 4, label: 'fetch /x', message: 'bad verb "fetch" in route "fetch /x" (expected one of get, post' }],
  ],
  ['path-without-leading-slash', [{ line: 4, label: 'get users/{id}', message: 'must start with "/"' }]],
  ['path-empty-segment', [{ line: 4, label: 'get /users//{id}', message: 'empty segment' }]],
  ['path-bad-param-name', [{ line: 4, label: 'get /users/{1st}', message: 'bad path parameter name "1st"' }]],
  [
    'path-repeated-param',
    [{ line: 4, label: 'get /users/{id}/friends/{id}', message: 'path parameter "id" appears more than once' }],
  ],
  ['all-not-requests', [{ line: 4, label: 'all /users', message: '"all" is only allowed with the path /requests' }]],
  [
    'duplicate-route-shape',
    [
      {
        line: 7,
        label: 'get /u/{name}',
        message: 'duplicate route: "get /u/{name}" has the same verb and path as "get /u/{id}" (line 4)',
      },
    ],
  ],
  [
    'duplicate-route-trailing-slash',
    [
      {
        line: 6,
        label: 'GET /a/',
        message: 'duplicate route: "GET /a/" has the same verb and path as "get /a" (line 4)',
      },
    ],
  ],
  [
    'unknown-alias-form',
    [{ line: 8, label: 'get /ping › Remember', message: 'alias "$.message.cookie.session" is not of a known form' }],
  ],
  [
    'alias-in-list-bad-form',
    [{ line: 7, label: 'get /ping › Enable', message: 'alias "$.nothing" is not of a known form' }],
  ],
  ['alias-unknown-map', [{ line: 6, label: 'before › CheckKey', message: 'unknown map "secrets"' }]],
  [
    'path-param-alias-not-in-path',
    [
      {
        line: 8,
        label: 'get /users/{id} › Read',
        message: 'path parameter "userId", but the path "/users/{id}" has only {id}',
      },
    ],
  ],
  ['empty-file', [{ line: 1, label: null, message: 'the file is empty' }]],
  ['not-a-map', [{ line: 2, label: null, message: 'the file must be a map' }]],
  [
    'several-errors',
    [
      { line: 2, label: null, message: 'key "Users" is not valid' },
      { line: 4, label: 'before › Check', message: 'parameter "current" of CheckKey is required' },
      { line: 7, label: 'get /users/{id} › Read', message: 'path parameter "uid"' },
      { line: 8, label: 'get /users/{id} › Reply', message: 'parameter "status" of ModifyMessage must be integer' },
      { line: 9, label: 'get /users/{name}/', message: 'duplicate route' },
      { line: 10, label: 'get /users/{name}/ › Ping', message: 'unknown directive "Pnig" (did you mean "Ping"?)' },
      { line: 11, label: 'fetch /x', message: 'bad verb "fetch"' },
      { line: 12, label: 'fetch /x › Ping', message: 'unknown parameter "extra" for Ping' },
      { line: 14, label: 'after › OnError', message: 'missing field "directive"' },
    ],
  ],
];

describe('validateApiYaml: broken files', () => {
  it.each(cases)('%s', (fixture, expected) => {
    const text = readFileSync(`${fixtures}${fixture}.yaml`, 'utf8');
    expect(text.startsWith('# broken:')).toBe(true);
    const { definition, errors } = validate(text);
    expect(definition).toBeNull();
    expect(errors.map((e) => ({ line: e.line, label: e.label, message: e.message }))).toEqual(
      expected.map((e) => ({ line: e.line, label: e.label, message: expect.stringContaining(e.message) })),
    );
    for (const error of errors) {
      expect(error.file).toBe('api.yaml');
      expect(error.column).toBeGreaterThanOrEqual(1);
    }
  });

  it('points at the value for wrong types and at the key for unknown fields', () => {
    const wrong = validate(readFileSync(`${fixtures}wrong-type-param.yaml`, 'utf8')).errors[0];
    expect(wrong?.column).toBe(48); // the "abc" of status: "abc"
    const unknown = validate(readFileSync(`${fixtures}unknown-param.yaml`, 'utf8')).errors[0];
    expect(unknown?.column).toBe(7); // the key foo
    const top = validate(readFileSync(`${fixtures}unknown-top-level-field.yaml`, 'utf8')).errors[0];
    expect(top?.column).toBe(1);
  });

  it('suggests nothing when no name is close', () => {
    const [error] = validate(readFileSync(`${fixtures}unknown-directive.yaml`, 'utf8')).errors;
    expect(error?.message).not.toContain('did you mean');
    expect(error?.message).not.toContain('Ping'); // lists nothing else
  });

  it('suggests a custom directive name too', () => {
    const text = 'key: users\nendpoints:\n  get /u:\n    Read: { directive: ReadUsr }\n';
    expect(validate(text).errors[0]?.message).toBe('unknown directive "ReadUsr" (did you mean "ReadUser"?)');
  });

  it('reports an alias to an unknown map inside a map parameter', () => {
    const text =
      'key: users\nendpoints:\n  get /u:\n    Reply: { directive: ModifyMessage, headers: { x-key: $.map.nope.key } }\n';
    const [error] = validate(text).errors;
    expect(error).toMatchObject({ line: 4, label: 'get /u › Reply' });
    expect(error?.message).toContain('unknown map "nope"');
  });

  it('does not check path parameters of aliases in before/after', () => {
    const text = [
      'key: users',
      'before:',
      '  Remember: { directive: SetMemory, target: id, value: $.message.pathParam.id }',
      'endpoints:',
      '  get /ping:',
      '    Ping: { directive: Ping }',
    ].join('\n');
    expect(validate(text).errors).toEqual([]);
  });

  it('refuses a text over 1 MiB', () => {
    const text = `key: users\nendpoints: {}\n# ${'x'.repeat(1024 * 1024)}\n`;
    const { errors } = validate(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ line: 1, column: 1, label: null });
    expect(errors[0]?.message).toContain('larger than 1 MiB');
  });
});

describe('validateApiYaml: valid files', () => {
  const valid = [
    '# a valid file',
    'key: users',
    'debug: true',
    'before:',
    '  CheckKey: { directive: CheckKey, expected: $.map.main.key, current: $.message.header.api-key }',
    'endpoints:',
    '  GET /user/{id}/:',
    '    Read: { directive: ReadUser, id: $.message.pathParam.id, anything: [1, { deep: true }] }',
    '    Fail: { directive: ThrowError, status: $.memory.code, message: $.message.pathParams.id, groups: [Custom, NORMAL_FLOW] }',
    '    Reply:',
    '      directive: ModifyMessage',
    '      headers: { content-type: application/json, x-id: $.id, x-list: [a, $.memory.x] }',
    '      status: $.memory.status',
    '      body: $.memory.user',
    '    Enable: { directive: Groups, enable: [a, $.memory.group], disableAll: $.message.body.reset, if: $.message.query.on }',
    '  all /requests:',
    '    NotFound: { directive: ThrowError, status: 404, message: Page not found }',
    '  get /:',
    '    Ping: { directive: Ping }',
    'after:',
    '  OnError: { directive: OnError, groups: [ERROR_FLOW] }',
    '  Log:     { directive: Log, groups: [AFTER_FLOW] }',
    '',
  ].join('\n');

  it('accepts aliases in typed parameters, also inside lists and maps', () => {
    const { errors, definition } = validate(valid);
    expect(errors).toEqual([]);
    expect(definition).not.toBeNull();
  });

  it('builds the definition: order, normalised routes, groups, params and positions', () => {
    const definition = validate(valid).definition!;
    expect(definition.key).toBe('users');
    expect(definition.debug).toBe(true);
    expect(definition.before).toEqual([
      {
        label: 'CheckKey',
        directive: 'CheckKey',
        groups: ['normal_flow'],
        params: { expected: '$.map.main.key', current: '$.message.header.api-key' },
        where: { file: 'api.yaml', line: 5, column: 3 },
      },
    ]);
    expect(definition.endpoints.map((e) => [e.verb, e.path, e.where.line])).toEqual([
      ['get', '/user/{id}', 7],
      ['all', '/requests', 16],
      ['get', '/', 18],
    ]);
    const [user] = definition.endpoints;
    expect(user?.entries.map((e) => e.label)).toEqual(['Read', 'Fail', 'Reply', 'Enable']);
    expect(user?.entries[1]).toMatchObject({
      directive: 'ThrowError',
      groups: ['custom', 'normal_flow'],
      params: { status: '$.memory.code', message: '$.message.pathParams.id' },
      where: { line: 9, column: 5 },
    });
    expect(user?.entries[0]?.params).toEqual({ id: '$.message.pathParam.id', anything: [1, { deep: true }] });
    expect(definition.after.map((e) => [e.label, e.groups])).toEqual([
      ['OnError', ['error_flow']],
      ['Log', ['after_flow']],
    ]);
  });

  it('accepts custom directives from Directives/ with any parameters', () => {
    const text =
      'key: users\nendpoints:\n  post /users:\n    Save: { directive: SaveUser, table: users, fields: [a, b], retry: 3 }\n';
    expect(validate(text, { customDirectives: new Set(['SaveUser']) }).errors).toEqual([]);
    expect(validate(text).errors[0]?.message).toContain('unknown directive "SaveUser"');
  });

  it('treats empty before/after as no entries and debug as false by default', () => {
    const text = 'key: a\nbefore:\nafter:\nendpoints:\n  get /a:\n    P: { directive: Ping }\n';
    const { definition, errors } = validate(text);
    expect(errors).toEqual([]);
    expect(definition).toMatchObject({ key: 'a', debug: false, before: [], after: [] });
  });

  it('accepts the same path with different verbs, and literal routes next to parameterised ones', () => {
    const text = [
      'key: a',
      'endpoints:',
      '  get /u/{id}: { P: { directive: Ping } }',
      '  post /u/{id}: { P: { directive: Ping } }',
      '  get /u/me: { P: { directive: Ping } }',
      '  get /requests: { P: { directive: Ping } }',
      '  ALL /requests: { P: { directive: Ping } }',
    ].join('\n');
    const { definition, errors } = validate(text);
    expect(errors).toEqual([]);
    expect(definition?.endpoints.map((e) => `${e.verb} ${e.path}`)).toEqual([
      'get /u/{id}',
      'post /u/{id}',
      'get /u/me',
      'get /requests',
      'all /requests',
    ]);
  });
});
