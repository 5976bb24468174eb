import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

// Issue 28: what the original's API files rely on — its system memory keys (item 1),
// `$.message.bodyAsArray` (item 3), and adding one response header without replacing the others
// (item 8), in-process (helpers/in-process-apis.ts). ForTheWorker's 200 under `compat: hefesto`
// (item 6), whose job the router runs, is test/http/original-compat.test.ts's.

let anvil: InProcessApis;

beforeAll(async () => {
  anvil = await startInProcess({
    apis: {
      legacy: {
        // Generous CPU: a first call builds the isolate, which a loaded CI machine can make slow.
        'api.yaml': `key: legacy
debug: true
limits: { cpuMs: 1000 }
endpoints:
  get /system:
    Reply:
      directive: ModifyMessage
      body:
        org: $.memory.hefesto-org
        env: $.memory.hefesto-env
        api: $.memory.hefesto-api
        localhost: $.memory.hefesto-localhost
        pathcode: $.memory.hefesto-pathcode
        pathstorage: $.memory.hefesto-pathstorage
        definitionpath: $.memory.hefesto-definitionpath
        definitionverb: $.memory.hefesto-definitionverb
        anvil: { host: $.memory.anvil-host, env: $.memory.anvil-env, api: $.memory.anvil-api, localhost: $.memory.anvil-localhost, path: $.memory.anvil-definitionPath }
  get /from-directive/{id}:
    Read: { directive: ReadSystem }
  get /via-bus:
    Call: { directive: Pull, host: $.memory.hefesto-localhost, path: /hidden/secret, target: secret }
    Reply: { directive: ModifyMessage, body: { secret: $.memory.secret } }
  post /body:
    Reply:
      directive: ModifyMessage
      body: { whole: $.message.bodyAsArray, name: $.message.bodyAsArray.user.name, tags: $.message.bodyAsArray.tags, missing: $.message.bodyAsArray.user.age, raw: $.message.body }
  get /headers/added:
    NoCache: { directive: CacheDisabled }
    Cookie: { directive: ModifyMessage, addHeaders: { set-cookie: "a=1; Path=/", x-one: "1" } }
    More: { directive: AddCookie }
  get /headers/replaced:
    NoCache: { directive: CacheDisabled }
    Cookie: { directive: ModifyMessage, headers: { set-cookie: "a=1; Path=/" } }
`,
        'Directives/ReadSystem.js': `export default function (state) {
  state.message.body = { api: state.memory.get('hefesto-api'), verb: state.memory.get('hefesto-definitionverb'), missing: state.memory.get('hefesto-nothing') };
}
`,
        'Directives/AddCookie.js': `export default function (state) {
  state.message.addHeader('Set-Cookie', 'b=2; Path=/');
  state.message.addHeader('x-one', 'replaced');
  state.message.addHeader('x-list', ['p', 'q']);
}
`,
      },
      hidden: {
        'api.yaml': `key: hidden
endpoints:
  get /secret:
    Local: { directive: CheckLocalCall }
    Reply: { directive: ModifyMessage, body: { caller: bus } }
`,
      },
      ported: {
        'api.yaml': `key: ported
compat: hefesto
endpoints:
  get /middle:
    Call: { directive: Pull, host: $.memory.hefesto-localhost, path: /hidden/secret, target: secret }
`,
      },
    },
  });
});
afterAll(async () => anvil?.dispose());

describe("the original's system memory keys (issue 28 item 1)", () => {
  it('read as the anvil-* keys they name; the paths are virtual, never the data directory', async () => {
    const reply = await anvil.request('/legacy/system');
    expect(reply.status).toBe(200);
    const body = reply.json();
    expect(body).toEqual({
      org: 'localhost',
      env: 'dev',
      api: 'legacy',
      localhost: anvil.localBaseUrl,
      pathcode: '/code/',
      pathstorage: '/storage/',
      definitionpath: '/system',
      definitionverb: 'GET',
      anvil: { host: 'localhost', env: 'dev', api: 'legacy', localhost: anvil.localBaseUrl, path: '/system' },
    });
    expect(reply.text).not.toContain(anvil.dataDir);
  });

  it('reach custom directives through state.memory', async () => {
    expect((await anvil.request('/legacy/from-directive/3')).json()).toEqual({
      api: 'legacy',
      verb: 'GET',
      missing: null,
    });
  });

  it('hefesto-localhost as a Pull host takes the bus, to a private API that admits only bus calls', async () => {
    expect((await anvil.request('/hidden/secret')).status).toBe(401); // not over the bus: refused
    const reply = await anvil.request('/legacy/via-bus');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ secret: { caller: 'bus' } });
  });
});

describe('Pull with target under compat: hefesto (issue 45 item 9)', () => {
  it("makes the called endpoint's answer the message, as the original did", async () => {
    const reply = await anvil.request('/ported/middle');
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ caller: 'bus' });
    // Without compat the answer only goes to memory: the message stays the API's own (empty body).
    const plain = await anvil.request('/legacy/via-bus');
    expect(plain.json()).toEqual({ secret: { caller: 'bus' } });
  });
});

describe('$.message.bodyAsArray (issue 28 item 3)', () => {
  it('is the parsed body, and drills into it like $.message.body.<field>', async () => {
    const body = { user: { name: 'Ann' }, tags: ['a', 'b'] };
    const reply = await anvil.request('/legacy/body', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      whole: body,
      name: 'Ann',
      tags: ['a', 'b'],
      missing: null,
      raw: JSON.stringify(body),
    });
  });

  it('is null for a body that is not JSON', async () => {
    const reply = await anvil.request('/legacy/body', { method: 'POST', body: 'plain words' });
    expect(reply.json()).toEqual({ whole: null, name: null, tags: null, missing: null, raw: 'plain words' });
  });
});

describe('adding one response header (issue 28 item 8)', () => {
  it('ModifyMessage addHeaders and state.message.addHeader keep the headers set before; cookies add up', async () => {
    const reply = await anvil.request('/legacy/headers/added');
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-cache');
    expect(reply.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(reply.headers['x-one']).toBe('replaced');
    expect(reply.headers['x-list']).toEqual(['p', 'q']);
  });

  it('whereas headers replaces them all', async () => {
    const reply = await anvil.request('/legacy/headers/replaced');
    expect(reply.headers['cache-control']).toBeUndefined();
    expect(reply.headers['set-cookie']).toBe('a=1; Path=/');
  });
});
