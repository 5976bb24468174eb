import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellOf, cellPid } from '../helpers/cells.js';
import { eventually, pingApi, startInstance, type TestInstance } from '../helpers/instance.js';

// What a custom directive hands the host leaves its isolate as a copy, which the isolate's memory
// limit no longer bounds: the host counts every kind of value the copy can carry against the API's
// memory limit, and a value too big to hand over at all is refused before it is copied (a sparse
// array by its length, a typed array by its bytes), with an error to the directive; the thread is
// free for the next request at once. `debug: true` shows the 500s' messages.

const MiB = 2 ** 20;
/** A value of each kind that holds 2 MiB (BIG, BUFFER: made once, the isolate's heap stays small). */
const kinds = {
  map: `new Map([[1, BIG]])`,
  set: `new Set([BIG])`,
  error: `new Error(BIG)`,
  regexp: `new RegExp(BIG)`,
  arraybuffer: `BUFFER`,
  view: `new Uint8Array(BUFFER, 0, 1)`,
  nested: `({ list: [new Map([['k', new Set([BIG])]])] })`,
};

const hoard = {
  'api.yaml': `key: hoard
debug: true
limits: { memoryMb: 16, cpuMs: 5000, wallMs: 20000 }
endpoints:
  get /hoard/{kind}/{n}:
    Hoard: { directive: Hoard, kind: $.message.pathParam.kind, n: $.message.pathParam.n }
  get /sparse:
    Sparse: { directive: Sparse }
  get /sparse-memory:
    Sparse: { directive: Sparse, memory: true }
  get /typed:
    Typed: { directive: Typed }
  get /cookies/{n}:
    Bake: { directive: Cookies, n: $.message.pathParam.n }
  get /groups/{n}:
    Enable: { directive: ManyGroups, n: $.message.pathParam.n }
  get /ping:
    Ping: { directive: Ping }
`,
  // Each value is handed over again and again: only the host keeps copies of it.
  'Directives/Hoard.js': `const BIG = 'x'.repeat(${2 * MiB});
const BUFFER = new ArrayBuffer(${2 * MiB});
const make = { ${Object.entries(kinds)
    .map(([kind, code]) => `${kind}: () => ${code}`)
    .join(', ')} };
export default function Hoard(state, config) {
  for (let i = 0; i < Number(config.n); i++) state.memory.set('kept' + i, make[config.kind]());
  state.message.body = { stored: Number(config.n) };
}
`,
  // set-cookie values add up, and so do groups: each name or value is a new copy on the host.
  'Directives/Cookies.js': `const BIG = 'x'.repeat(${MiB});
export default function Cookies(state, config) {
  let set = 0;
  let error = null;
  try {
    for (; set < Number(config.n); set++) state.message.addHeader('set-cookie', 'c' + set + '=' + BIG);
  } catch (e) {
    error = e.message;
  }
  // The response's head has a quota of its own (64 KiB): what was set goes before the answer.
  state.message.headers = {};
  state.message.body = { set, error };
}
`,
  'Directives/ManyGroups.js': `const BIG = 'g'.repeat(${MiB});
export default function ManyGroups(state, config) {
  for (let i = 0; i < Number(config.n); i++) state.groups.enable(BIG + i);
  state.message.body = { enabled: Number(config.n) };
}
`,
  'Directives/Sparse.js': `export default function Sparse(state, config) {
  const sparse = [];
  sparse[1e8] = 1;
  if (config.memory) state.memory.set('sparse', sparse);
  else state.message.body = sparse;
}
`,
  // 12 MiB in the isolate; as JSON, an object of twelve million numbers.
  'Directives/Typed.js': `export default function Typed(state) {
  state.message.body = new Uint8Array(${12 * MiB});
}
`,
};

let anvil: TestInstance;
beforeAll(async () => {
  anvil = await startInstance({
    apis: { hoard, neighbour: pingApi('neighbour') },
    args: ['--max-directive-cpu', '5s', '--max-directive-wall', '20s'],
  });
});
afterAll(async () => anvil?.dispose());

describe('values stored in request memory are counted by what they hold', () => {
  for (const kind of Object.keys(kinds)) {
    it(`${kind}: two of 2 MiB are stored; twelve are refused at the API's 16 MiB with the memory limit error`, async () => {
      expect((await anvil.request(`/hoard/hoard/${kind}/2`)).json()).toEqual({ stored: 2 });
      const refused = await anvil.request(`/hoard/hoard/${kind}/12`);
      expect(refused.status).toBe(500);
      expect(refused.json().error).toMatch(
        /^memory limit: storing kept\d+ would make this request hold more than the API's 16 MiB outside its isolates$/,
      );
      expect((await anvil.request('/hoard/ping')).status).toBe(200);
    });
  }
});

describe('what the headers and groups a directive sets hold counts too', () => {
  it('set-cookie values that add up past the limit are refused with the memory limit error, thrown to the directive', async () => {
    const reply = (await anvil.request('/hoard/cookies/24')).json();
    expect(reply.set).toBeLessThan(16);
    expect(reply.error).toBe(
      "memory limit: storing the response headers would make this request hold more than the API's 16 MiB outside its isolates",
    );
    expect((await anvil.request('/hoard/ping')).status).toBe(200);
  });

  it('groups enabled past the limit are refused with the memory limit error', async () => {
    expect((await anvil.request('/hoard/groups/2')).json()).toEqual({ enabled: 2 });
    const refused = await anvil.request('/hoard/groups/24');
    expect(refused.status).toBe(500);
    expect(refused.json().error).toBe(
      "memory limit: storing the enabled groups would make this request hold more than the API's 16 MiB outside its isolates",
    );
  });
});

describe('a value too big to hand to the host is refused before it is copied', () => {
  const cases = [
    ['a sparse array as the body', '/hoard/sparse', 'Sparse: message.body'],
    ['a sparse array stored in memory', '/hoard/sparse-memory', 'Sparse: the value of memory.set("sparse")'],
    ['a 12 MiB typed array as the body (twelve million numbers as JSON)', '/hoard/typed', 'Typed: message.body'],
  ] as const;
  for (const [what, path, refused] of cases) {
    it(`${what}: 500 naming the limit; the next request of the API and its neighbour's answer`, async () => {
      const pid = cellPid(anvil.pid, cellOf('hoard', 2));
      const reply = await anvil.request(path);
      expect(reply.status).toBe(500);
      expect(reply.json().error).toBe(
        `${refused} would take more than the API's 16 MiB memory limit out of its sandbox (api.yaml limits.memoryMb)`,
      );
      expect((await anvil.request('/hoard/ping')).status).toBe(200);
      expect((await anvil.request('/neighbour/ping')).status).toBe(200);
      expect(cellPid(anvil.pid, cellOf('hoard', 2))).toBe(pid);
      await eventually(() => anvil.logLines().some((l) => l.api === 'hoard' && String(l.message).startsWith(refused)));
    });
  }
});
