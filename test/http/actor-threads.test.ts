import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellOf, cellPid, settledTaskCount } from '../helpers/cells.js';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

// Threads are observed as the operating system sees them: the tasks of the API's cell process. The
// cell keeps one spare thread (in the baseline); when an API takes it, a new spare replaces it a
// moment later, so counts are checked once they settle.
const SLOW = `key: pool
endpoints:
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Reply: { directive: ModifyMessage, body: { ok: true } }
`;

let anvil: TestInstance;
let baseline: number;
const threads = () => readdirSync(`/proc/${cellPid(anvil.pid, cellOf('pool', 1))}/task`).length - baseline;

beforeAll(async () => {
  // One cell, so the only actor threads in it are the pool API's; short idle timeout.
  anvil = await startInstance({ apis: { pool: { 'api.yaml': SLOW } }, args: ['--cells', '1', '--idle-timeout', '600ms', '--thread-concurrency', '64'] });
  baseline = await settledTaskCount(cellPid(anvil.pid, 0));
});
afterAll(async () => anvil?.dispose());

describe("an API's thread pool", () => {
  it('has no thread until the first request, grows to at most 2 under load, and shrinks to none when idle', async () => {
    expect(threads()).toBe(0);
    expect((await anvil.request('/pool/wait/0')).status).toBe(200);
    await eventually(() => threads() === 1);

    // A request that stays in flight (over 20 ms) makes the actor start a second thread for the
    // requests that follow, and never a third.
    const long = anvil.request('/pool/wait/800');
    const [started] = await waitForStarted(anvil, 'pool', (l) => l.path.endsWith('/wait/800'), { what: 'GET /pool/wait/800' });
    // In flight for over 20 ms (a real-time threshold of the actor), counted from when the thread logged it.
    await waitFor(() => Date.now() >= Date.parse(started!.time) + 30, { what: 'GET /pool/wait/800 in flight for 30 ms' });
    const more = await Promise.all(Array.from({ length: 20 }, () => anvil.request('/pool/wait/200')));
    await waitFor(() => threads() === 2, { what: 'the second thread of pool, started for the requests that followed the long one' });
    const again = await Promise.all(Array.from({ length: 20 }, () => anvil.request('/pool/wait/50')));
    expect([...more, ...again, await long].every((r) => r.status === 200)).toBe(true);
    await eventually(() => threads() === 2);

    await eventually(() => threads() === 0, 10_000);
    // And it comes back on demand.
    expect((await anvil.request('/pool/wait/0')).status).toBe(200);
    await eventually(() => threads() === 1);
  });

  it('starts its second thread when 8 requests are in flight at once, even quick ones', async () => {
    await eventually(() => threads() === 0, 10_000);
    expect((await anvil.request('/pool/wait/0')).status).toBe(200);
    await eventually(() => threads() === 1);
    // Sent together, they are all in flight on the one thread before any is answered; none of them
    // stays long enough (20 ms) to start a thread by itself.
    const burst = await Promise.all(Array.from({ length: 30 }, () => anvil.request('/pool/wait/0')));
    expect(burst.every((r) => r.status === 200)).toBe(true);
    await eventually(() => threads() === 2);
  });
});
