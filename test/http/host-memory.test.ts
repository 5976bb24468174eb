import { afterAll, beforeAll, expect, it } from 'vitest';
import { cellOf, cellPid } from '../helpers/cells.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';

// What a request makes the host hold (request memory, the response body) counts against the API's
// memory limit, as its isolate's heap does: crossing it fails the request, never the cell.
const api = {
  'api.yaml': `key: hoard
limits: { memoryMb: 8, cpuMs: 5000 }
endpoints:
  get /hoard/{n}:
    Hoard: { directive: Hoard, n: $.message.pathParam.n, sameKey: false }
  get /overwrite/{n}:
    Hoard: { directive: Hoard, n: $.message.pathParam.n, sameKey: true }
  get /concat4:
    Hoard: { directive: Hoard, n: 1, sameKey: true }
    Join: { directive: Concat, element1: $.memory.kept, element2: $.memory.kept, element3: $.memory.kept, element4: $.memory.kept, target: joined }
    Reply: { directive: ModifyMessage, body: { ok: true } }
  get /concat8:
    Hoard: { directive: Hoard, n: 1, sameKey: true }
    Join: { directive: Concat, element1: $.memory.kept, element2: $.memory.kept, element3: $.memory.kept, element4: $.memory.kept, element5: $.memory.kept, element6: $.memory.kept, element7: $.memory.kept, element8: $.memory.kept, target: joined }
    Reply: { directive: ModifyMessage, body: { ok: true } }
  get /ping:
    Ping: { directive: Ping }
`,
  // Each megabyte string is made and dropped in the isolate (its heap stays small); only the host keeps them.
  'Directives/Hoard.js': `export default function Hoard(state, config) {
  for (let i = 0; i < Number(config.n); i++) state.memory.set(config.sameKey ? 'kept' : 'kept' + i, String(i % 10).repeat(1024 * 1024));
  state.message.body = { stored: Number(config.n) };
}
`,
};

let anvil: TestInstance;
beforeAll(async () => {
  // Making and copying 40 MiB of strings takes more than the default 50 ms of CPU on a busy machine.
  anvil = await startInstance({ apis: { hoard: api }, args: ['--max-directive-cpu', '5s'] });
});
afterAll(async () => anvil?.dispose());

it("fails a request whose memory values grow past the API's limit with a 500 and a log line; the cell lives on", async () => {
  expect((await anvil.request('/hoard/ping')).status).toBe(200);
  const pid = cellPid(anvil.pid, cellOf('hoard', 2));

  expect((await anvil.request('/hoard/hoard/4')).json()).toEqual({ stored: 4 });
  const refused = await anvil.request('/hoard/hoard/20');
  expect(refused.status).toBe(500);
  expect(refused.json()).toEqual({ error: 'Internal Server Error' });
  const logged = await eventually(() =>
    anvil.logLines().find((l) => l.api === 'hoard' && /memory limit/.test(JSON.stringify(l))),
  );
  expect(JSON.stringify(logged)).toMatch(
    /memory limit: storing kept\d+ would make this request hold more than the API's 8 MiB/,
  );
  // What it had stored was let go of, so its error flow could answer; nothing else was blamed.
  expect(
    anvil.logLines().filter((l) => /memory limit/.test(JSON.stringify(l)) && /storing error/.test(JSON.stringify(l))),
  ).toEqual([]);

  expect((await anvil.request('/hoard/ping')).status).toBe(200);
  expect(cellPid(anvil.pid, cellOf('hoard', 2))).toBe(pid);
});

it('counts a place once: storing again at the same key replaces what it held', async () => {
  expect((await anvil.request('/hoard/overwrite/40')).json()).toEqual({ stored: 40 });
});

it("counts what built-ins store too (Concat's output)", async () => {
  expect((await anvil.request('/hoard/concat4')).json()).toEqual({ ok: true });
  const refused = await anvil.request('/hoard/concat8');
  expect(refused.status).toBe(500);
  await eventually(() => anvil.logLines().some((l) => /memory limit: storing joined/.test(JSON.stringify(l))));
});
