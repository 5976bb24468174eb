import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessApis } from '../helpers/in-process-apis.js';
import { waitFor } from '../helpers/wait-for.js';

// LoadModel, ValidateModel and LoadAndValidateModel (ORIGINAL.md): a model in memory checked
// against the JSON Schema (draft 2020-12) that is the whole map of the same name. Invalid: 400
// with ajv's first error (the instance path, then the message); `server-side-error: true` makes
// it a 502 with the reason in the instance log. Schemas are checked at deploy time. In-process:
// the engine, built-ins and sandbox of an actor thread, without an instance (helpers/in-process-apis.ts).

// `$.message.body` is the body's text; ReadBody (a custom directive: a JSON body arrives there
// parsed) puts the parsed body in memory `body`, as the original's `$.message.bodyAsArray` would.
const READ_BODY = 'export default (state) => { state.memory.set("body", state.message.body); };\n';

const API = `key: models
before:
  ReadBody: { directive: ReadBody }
endpoints:
  post /people:
    Load: { directive: LoadModel, source: $.memory.body, target: person }
    Check: { directive: ValidateModel, name: person }
    Reply: { directive: ModifyMessage, body: { accepted: $.memory.person } }
  post /people/once:
    Check: { directive: LoadAndValidateModel, source: $.memory.body, target: person }
    Reply: { directive: ModifyMessage, body: { accepted: $.memory.person.name } }
  post /people/from-body:
    Check: { directive: LoadAndValidateModel, source: $.message.body, target: person }
    Reply: { directive: ModifyMessage, body: { accepted: $.memory.person.name } }
  post /people/load-body:
    Load: { directive: LoadModel, source: $.message.body, target: person }
    Check: { directive: ValidateModel, name: person }
    Reply: { directive: ModifyMessage, body: { accepted: $.memory.person } }
  post /upstream:
    Check: { directive: LoadAndValidateModel, source: $.memory.body, target: person, server-side-error: true }
    Reply: { directive: ModifyMessage, body: { ok: true } }
  post /by-name/{model}:
    Load: { directive: LoadModel, source: $.memory.body, target: $.message.pathParam.model }
    Check: { directive: ValidateModel, name: $.message.pathParam.model }
    Reply: { directive: ModifyMessage, body: { ok: true } }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

const PERSON = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    age: { type: 'integer', minimum: 0 },
    email: { type: 'string', format: 'email' },
    role: { enum: ['admin', 'user'] },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['name', 'age'],
  additionalProperties: false,
};

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await InProcessApis.start({
    models: {
      'api.yaml': API,
      'Directives/ReadBody.js': READ_BODY,
      'Maps/person.json': JSON.stringify(PERSON),
      // A map that is not a schema, reachable only through an alias: a 500 per request.
      'Maps/notschema.json': JSON.stringify({ type: 'object', properties: 5 }),
      'Maps/anything.json': 'true',
    },
    'models-debug': {
      'api.yaml': API.replace('key: models', 'key: models-debug\ndebug: true'),
      'Directives/ReadBody.js': READ_BODY,
      'Maps/person.json': JSON.stringify(PERSON),
    },
  });
});
afterAll(async () => anvil?.dispose());

const post = (path: string, body: unknown, api = 'models') =>
  anvil.request(`/${api}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('ValidateModel and LoadModel', () => {
  it('lets a valid model through, in memory under its name', async () => {
    const person = { name: 'Ann', age: 42, email: 'ann@example.org', role: 'admin', tags: ['a'] };
    const reply = await post('/people', person);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ accepted: person });
  });

  it("refuses an invalid model with 400 and ajv's first error, with its instance path", async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'Ann' }, "person must have required property 'age'"],
      [{ name: 'Ann', age: 'old' }, 'person/age must be integer'],
      [{ name: 'Ann', age: -1 }, 'person/age must be >= 0'],
      [{ name: 'Ann', age: 1, email: 'not-an-address' }, 'person/email must match format "email"'],
      [
        { name: 'Ann', age: 1, role: 'root' },
        'person/role must be equal to one of the allowed values: "admin", "user"',
      ],
      [{ name: 'Ann', age: 1, tags: ['a', 7] }, 'person/tags/1 must be string'],
      [{ name: 'Ann', age: 1, nickname: 'A' }, 'person must NOT have additional properties: "nickname"'],
      [[1, 2], 'person must be object'],
    ];
    for (const [body, error] of cases) {
      const reply = await post('/people', body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.json()).toEqual({ error });
    }
  });

  it('validates a missing model (no body) as null', async () => {
    const reply = await anvil.request('/models/people', { method: 'POST' });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: 'person must be object' });
  });

  it('LoadAndValidateModel does both, with the name `target`', async () => {
    expect((await post('/people/once', { name: 'Bo', age: 3 })).json()).toEqual({ accepted: 'Bo' });
    const reply = await post('/people/once', { name: '', age: 3 });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: 'person/name must NOT have fewer than 1 characters' });
  });

  it('takes `$.message.body` (the body as text) as the parsed JSON body, and says so when the body is not JSON', async () => {
    // As docs/directives.md shows it: a valid JSON POST passes, an invalid one gets ajv's message.
    expect((await post('/people/from-body', { name: 'Cy', age: 5 })).json()).toEqual({ accepted: 'Cy' });
    expect((await post('/people/load-body', { name: 'Di', age: 6 })).json()).toEqual({
      accepted: { name: 'Di', age: 6 },
    });
    const invalid = await post('/people/from-body', { name: 'Cy' });
    expect([invalid.status, invalid.json()]).toEqual([400, { error: "person must have required property 'age'" }]);
    const malformed = await anvil.request('/models/people/from-body', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name": "Cy", "age": 5',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json().error).toMatch(/^Bad Request: the request body is not valid JSON \(.+\)$/);
    // Text that is not JSON-like stays text: a model of an object refuses it as before.
    const text = await anvil.request('/models/people/from-body', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect([text.status, text.json()]).toEqual([400, { error: 'person must be object' }]);
  });

  it('with server-side-error: true answers 502 "Server Side Error" and logs the reason', async () => {
    const reply = await post('/upstream', { name: 'Ann' });
    expect(reply.status).toBe(502);
    // A 5xx message is generic for clients unless the API has debug on (SPEC §4).
    expect(reply.json()).toEqual({ error: 'Bad Gateway' });
    const debug = await post('/upstream', { name: 'Ann' }, 'models-debug');
    expect([debug.status, debug.json()]).toEqual([502, { error: 'Server Side Error' }]);
    await waitFor(
      () =>
        anvil
          .logLines()
          .find(
            (l) =>
              l.api === 'models' &&
              l.msg === 'LoadAndValidateModel: the model is not valid (server-side-error: 502)' &&
              l.error === "person must have required property 'age'",
          ),
      { what: 'the log line naming why the model was refused' },
    );
    expect((await post('/upstream', { name: 'Ann', age: 1 })).status).toBe(200);
  });

  it('answers 500 when a name from an alias has no map or its map is not a schema, and logs why', async () => {
    const none = await post('/by-name/nosuch', {});
    expect([none.status, none.json()]).toEqual([500, { error: 'Internal Server Error' }]);
    const broken = await post('/by-name/notschema', {});
    expect(broken.status).toBe(500);
    await waitFor(
      () =>
        anvil
          .logLines()
          .find(
            (l) =>
              l.api === 'models' &&
              l.status === 500 &&
              String(l.message).includes('there is no map "nosuch" (Maps/nosuch.json)'),
          ),
      { what: 'the log line of the missing map' },
    );
    await waitFor(
      () =>
        anvil
          .logLines()
          .find(
            (l) =>
              l.api === 'models' &&
              l.status === 500 &&
              String(l.message).includes('map "notschema" is not a valid JSON Schema'),
          ),
      { what: 'the log line of the broken schema' },
    );
    // A boolean schema is a schema: `true` takes anything.
    expect((await post('/by-name/anything', { any: 'thing' })).status).toBe(200);
  });
});

describe('model schemas at deploy time', () => {
  const deploy = (files: Record<string, string>) => anvil.deploy(files);
  const yaml = (entry: string) => `key: bad-models\nendpoints:\n  post /x:\n    Check: ${entry}\n`;

  it('refuses a literal name without its map, with file, line and label', async () => {
    const reply = await deploy({ 'api.yaml': yaml('{ directive: ValidateModel, name: person }') });
    expect(reply.status).toBe(400);
    expect(reply.json().errors).toEqual([
      expect.stringMatching(
        /^api\.yaml:4:\d+ \[post \/x › Check\] there is no map "person" \(Maps\/person\.json\) to validate against$/,
      ),
    ]);
  });

  it('refuses a map that is not a valid schema, naming the map', async () => {
    const reply = await deploy({
      'api.yaml': yaml('{ directive: LoadAndValidateModel, source: $.memory.body, target: order }'),
      'Maps/order.json': '{"type": "strin"}',
    });
    expect(reply.status).toBe(400);
    expect(reply.json().errors).toEqual([
      expect.stringMatching(
        /^api\.yaml:4:\d+ \[post \/x › Check\] map "order" is not a valid JSON Schema: schema is invalid: .*type/,
      ),
    ]);
  });

  it('refuses a pattern that nests repetition (ReDoS) and a $ref it would have to fetch', async () => {
    const redos = await deploy({
      'api.yaml': yaml('{ directive: ValidateModel, name: host }'),
      'Maps/host.json': JSON.stringify({ type: 'string', pattern: '^([a-z]+)+$' }),
    });
    expect(redos.status).toBe(400);
    expect(redos.json().errors.join('\n')).toMatch(
      /map "host" is not a valid JSON Schema: pattern it repeats a group that repeats itself/,
    );
    const remote = await deploy({
      'api.yaml': yaml('{ directive: ValidateModel, name: host }'),
      'Maps/host.json': JSON.stringify({ $ref: 'https://example.org/schema.json' }),
    });
    expect(remote.status).toBe(400);
    expect(remote.json().errors.join('\n')).toMatch(
      /map "host" is not a valid JSON Schema: can't resolve reference https:\/\/example\.org\/schema\.json/,
    );
  });

  it('leaves a name from an alias to the request, and deploys a good schema', async () => {
    const reply = await deploy({
      'api.yaml': `key: good-models\nendpoints:\n  post /x/{m}:\n    A: { directive: ValidateModel, name: $.message.pathParam.m }\n    B: { directive: ValidateModel, name: item, server-side-error: true }\n`,
      'Maps/item.json': JSON.stringify({
        type: 'object',
        $defs: { id: { type: 'integer' } },
        properties: { id: { $ref: '#/$defs/id' } },
      }),
    });
    expect(reply.status, reply.text).toBe(201);
  });
});
