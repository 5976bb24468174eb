import { afterAll, beforeAll, expect, it } from 'vitest';
import { backgroundLoad, type BackgroundLoad } from '../helpers/background-load.js';
import { cellOf } from '../helpers/cells.js';
import { eventually, pingApi, startInstance, type TestInstance } from '../helpers/instance.js';
import { killerApi } from '../helpers/killer-api.js';

// An endless recursive SQL query is native code no timeout interrupts: the router's watchdog
// recycles the stuck thread, and kills its cell when terminating the thread cannot stop it.
// (The process-aborting allocations are in sandbox-fatal.test.ts, under a longer request timeout.)
const neighbourKey = Array.from({ length: 50 }, (_, i) => `calm-${i}`).find(
  (k) => cellOf(k, 2) !== cellOf('stuck', 2),
)!;

let anvil: TestInstance;
let neighbour: BackgroundLoad;

beforeAll(async () => {
  anvil = await startInstance({
    apis: { stuck: killerApi('stuck', ['EndlessSql']), [neighbourKey]: pingApi(neighbourKey) },
    // The watchdog's steps each wait a request timeout (silent → probed → terminated) and then 3 s:
    // a short timeout keeps the test short.
    args: ['--cells', '2', '--request-timeout', '3s'],
  });
  neighbour = backgroundLoad(anvil, `/${neighbourKey}/ping`);
});

afterAll(async () => {
  await neighbour?.stop();
  await anvil?.dispose();
});

const logged = (msg: string) => anvil.logLines().filter((l) => l.msg === msg && l.api === 'stuck');

it('gets a 504, then the watchdog terminates the thread and, when that cannot stop it, kills its cell', async () => {
  const reply = await anvil.request('/stuck/EndlessSql');
  expect(reply.status).toBe(504);
  await eventually(() => logged('thread stuck past the request timeout; terminating it')[0], 15_000);
  await eventually(() => logged('stuck thread did not stop; killing its cell')[0], 15_000);
  await eventually(() => logged('API quarantined in a cell of its own')[0], 15_000);
  await eventually(async () => (await anvil.request('/stuck/ping')).status === 200, 15_000);
}, 60_000);

it('the router never restarted and the API in the other cell answered every request', () => {
  expect(anvil.child.exitCode).toBeNull();
  expect(neighbour.statuses().length).toBeGreaterThan(50);
  expect(neighbour.statuses().every((s) => s === 200)).toBe(true);
});
