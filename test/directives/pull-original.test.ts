import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

// Issue 28 item 2, the original's Pull: without `target` the upstream's answer becomes the message;
// with `target` the answer is checked against Maps/<target>.json when that map exists (502 when it
// does not match); the upstream's status is in memory `pullStatus` either way.

let upstream: Upstream;
let anvil: InProcessApis;

beforeAll(async () => {
  upstream = await startUpstream();
  const host = `http://127.0.0.1:${upstream.port}`;
  anvil = await startInProcess({
    env: { ANVIL_EGRESS_ALLOW: '127.0.0.1' },
    apis: {
      pulls: {
        'api.yaml': `key: pulls
debug: true
endpoints:
  get /relay:
    Get: { directive: Pull, host: "${host}", path: /echo, queryParams: { q: $.message.query.q } }
  get /relay/status/{n}:
    Path: { directive: Concat, element1: /status/, element2: $.message.pathParam.n, target: path }
    Get: { directive: Pull, host: "${host}", path: $.memory.path, verify: false }
  get /relay/missing:
    Get: { directive: Pull, host: "${host}", path: /missing }
  get /relay/bus:
    Get: { directive: Pull, host: $.memory.hefesto-localhost, path: /callee/made }
  get /checked:
    Get: { directive: Pull, host: "${host}", path: /echo, target: echo }
    Reply: { directive: ModifyMessage, body: { method: $.memory.echo.method, status: $.memory.pullStatus } }
  get /mismatch:
    Get: { directive: Pull, host: "${host}", path: /echo, target: strict }
    Reply: { directive: ModifyMessage, body: $.memory.strict }
  get /unchecked:
    Get: { directive: Pull, host: "${host}", path: /echo, target: strict, schema: false }
    Reply: { directive: ModifyMessage, body: { method: $.memory.strict.method } }
  get /named-schema:
    Get: { directive: Pull, host: "${host}", path: /echo, target: whatever, schema: strict }
  get /no-map:
    Get: { directive: Pull, host: "${host}", path: /echo, target: plain }
    Reply: { directive: ModifyMessage, body: { method: $.memory.plain.method } }
  get /error-not-checked:
    Get: { directive: Pull, host: "${host}", path: /missing, target: strict, verify: false }
    Reply: { directive: ModifyMessage, body: { got: $.memory.strict, status: $.memory.pullStatus } }
  get /broken-schema:
    Get: { directive: Pull, host: "${host}", path: /echo, target: broken }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`,
        'Maps/echo.json': JSON.stringify({
          type: 'object',
          required: ['method', 'path'],
          properties: { method: { const: 'GET' } },
        }),
        'Maps/strict.json': JSON.stringify({ type: 'object', required: ['id'] }),
        'Maps/broken.json': JSON.stringify({ type: 12 }),
      },
      callee: {
        'api.yaml': `key: callee
endpoints:
  get /made:
    Local: { directive: CheckLocalCall }
    Reply: { directive: ModifyMessage, status: 201, headers: { content-type: application/json, x-made: "yes" }, body: { made: true } }
`,
      },
    },
  });
});
afterAll(async () => {
  await anvil?.dispose();
  await upstream?.close();
});

describe('Pull without target', () => {
  it("makes the upstream's answer the message: status, headers (hop-by-hop ones dropped) and body", async () => {
    const reply = await anvil.request('/pulls/relay?q=1');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    const body = reply.json();
    expect(body).toMatchObject({ method: 'GET', path: '/echo', query: { q: '1' } });

    const status = await anvil.request('/pulls/relay/status/203');
    expect(status.status).toBe(203);
    expect(status.headers['x-upstream']).toBe('yes');
    expect(status.headers['x-up-secret']).toBeUndefined(); // named by `connection`: hop-by-hop
    expect(status.json()).toEqual({ status: 203 });
  });

  it('with verify off relays an error answer as it is; with verify on it is a 502', async () => {
    const lenient = await anvil.request('/pulls/relay/status/404');
    expect(lenient.status).toBe(404);
    expect(lenient.json()).toEqual({ status: 404 });
    const strict = await anvil.request('/pulls/relay/missing');
    expect(strict.status).toBe(502);
  });

  it('over the bus (host $.memory.hefesto-localhost) as well', async () => {
    const reply = await anvil.request('/pulls/relay/bus');
    expect(reply.status).toBe(201);
    expect(reply.headers['x-made']).toBe('yes');
    expect(reply.json()).toEqual({ made: true });
  });
});

describe('Pull with target', () => {
  it('checks the answer against Maps/<target>.json and keeps the status in memory pullStatus', async () => {
    const reply = await anvil.request('/pulls/checked');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ method: 'GET', status: 200 });
  });

  it('answers 502 when the answer does not match, naming the schema and what is wrong', async () => {
    const reply = await anvil.request('/pulls/mismatch');
    expect(reply.status).toBe(502);
    expect(reply.json().error).toMatch(
      /does not match the schema Maps\/strict\.json: the answer must have required property 'id'/,
    );
    const named = await anvil.request('/pulls/named-schema');
    expect(named.status).toBe(502);
    expect(named.json().error).toContain('Maps/strict.json');
  });

  it('checks nothing with schema: false, or when there is no map of that name', async () => {
    expect((await anvil.request('/pulls/unchecked')).json()).toEqual({ method: 'GET' });
    expect((await anvil.request('/pulls/no-map')).json()).toEqual({ method: 'GET' });
  });

  it('checks only a 2xx answer: an error answer let through by verify: false is stored as it is', async () => {
    const reply = await anvil.request('/pulls/error-not-checked');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ got: { error: 'nope' }, status: 404 });
  });

  it('a map that is not a JSON Schema is a 500 naming it', async () => {
    const reply = await anvil.request('/pulls/broken-schema');
    expect(reply.status).toBe(500);
    expect(reply.json().error).toMatch(/Maps\/broken\.json is not a JSON Schema that compiles/);
  });
});
