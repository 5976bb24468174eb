import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startInstance, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { waitFor, waitForStarted } from '../helpers/wait-for.js';

// Threads are observed as an operator sees them: the API's anvil_actor_threads in /anvil/metrics.
// (Counting the cell's OS tasks instead was flaky while other suites loaded the machine: V8 and
// libuv start helper threads of their own at moments no test controls.)
const SLOW = `key: pool
endpoints:
  get /wait/{ms}:
    Started: { directive: Log }
    Wait: { directive: Delay, ms: $.message.pathParam.ms }
    Reply: { directive: ModifyMessage, body: { ok: true } }
  get /burn:
    Burn: { directive: Burn }
`;
// Keeps its thread running for 5 ms (a request that computes).
const BURN = `export default function Burn(state) {
  const until = Date.now() + 5;
  let spins = 0;
  while (Date.now() < until) spins++;
  state.message.body = { spun: spins > 0 };
}
`;

let anvil: TestInstance;
const threads = async () =>
  sample(await scrapeMetrics(anvil), 'anvil_actor_threads', { host: 'localhost', api: 'pool' }) ?? 0;

beforeAll(async () => {
  // One cell, so the only actor threads in it are the pool API's; short idle timeout. Threads of its
  // own from the start (--shared-threads 0): how a busy API's own pool grows and shrinks. How a quiet
  // API shares a thread and is given its own: shared-threads.test.ts.
  anvil = await startInstance({
    apis: { pool: { 'api.yaml': SLOW, 'Directives/Burn.js': BURN } },
    args: ['--cells', '1', '--idle-timeout', '600ms', '--thread-concurrency', '64', '--shared-threads', '0'],
  });
});
afterAll(async () => anvil?.dispose());

/**
 * One request in flight while the API's threads are counted: it has one thread then. Looked at
 * after the answer instead, a scrape slowed by a loaded machine could come after --idle-timeout had
 * already stopped that thread. (A lone request never starts a second one.)
 */
async function oneThreadWhileServing(): Promise<void> {
  const pending = anvil.request('/pool/wait/1500');
  await eventually(async () => (await threads()) === 1);
  expect((await pending).status).toBe(200);
}

describe("an API's thread pool", () => {
  it('has no thread until the first request, grows to at most 2 under load, and shrinks to none when idle', async () => {
    expect(await threads()).toBe(0);
    await oneThreadWhileServing();

    // A request that stays in flight (over 20 ms) makes the actor start a second thread for the
    // requests that follow, and never a third.
    const long = anvil.request('/pool/wait/800');
    const [started] = await waitForStarted(anvil, 'pool', (l) => l.path.endsWith('/wait/800'), {
      what: 'GET /pool/wait/800',
    });
    // In flight for over 20 ms (a real-time threshold of the actor), counted from when the thread logged it.
    await waitFor(() => Date.now() >= Date.parse(started!.time) + 30, {
      what: 'GET /pool/wait/800 in flight for 30 ms',
    });
    // Watched from when they are sent: on a loaded machine the last answers can come later than the
    // second thread's --idle-timeout after its own, and it would be gone before a look taken then.
    const second = waitFor(async () => (await threads()) === 2, {
      what: 'the second thread of pool, started for the requests that followed the long one',
    });
    const more = await Promise.all(Array.from({ length: 20 }, () => anvil.request('/pool/wait/200')));
    await second;
    const again = await Promise.all(Array.from({ length: 20 }, () => anvil.request('/pool/wait/50')));
    expect([...more, ...again, await long].every((r) => r.status === 200)).toBe(true);
    // Never a third (the second may already be idle past --idle-timeout and gone).
    expect(await threads()).toBeLessThanOrEqual(2);

    await eventually(async () => (await threads()) === 0, 10_000);
    // And it comes back on demand.
    await oneThreadWhileServing();
  });

  it('keeps one thread for quick requests, however many are in flight at once', async () => {
    await eventually(async () => (await threads()) === 0, 10_000);
    await oneThreadWhileServing();
    // Sent together, they are all in flight on the one thread before any is answered (the 30
    // connections are opened first, by requests the router answers itself, 404 for an unknown API:
    // opened during a burst, their handshakes would spread it out). The thread uses a sliver of a
    // core on them: a second one would only cost more per request (cell/actors/cpu-shares.ts).
    await Promise.all(Array.from({ length: 30 }, () => anvil.request('/no-such-api/warm')));
    for (let round = 0; round < 5; round++) {
      const burst = await Promise.all(Array.from({ length: 30 }, () => anvil.request('/pool/wait/0')));
      expect(burst.every((r) => r.status === 200)).toBe(true);
    }
    // Looked at at once: a second thread started by the bursts would still be there (--idle-timeout 600ms).
    expect(await threads()).toBe(1);
  });

  it('starts its second thread when its first keeps a core busy', async () => {
    await eventually(async () => (await threads()) === 0, 10_000);
    const second = waitFor(async () => (await threads()) === 2, {
      what: 'the second thread of pool, started for requests that keep the first one busy',
    });
    // Eight clients, each sending its next request as soon as the last is answered, until it starts.
    let started = false;
    void second.then(
      () => (started = true),
      () => {},
    );
    const clients = Array.from({ length: 8 }, async () => {
      const statuses: number[] = [];
      while (!started && statuses.length < 2_000) statuses.push((await anvil.request('/pool/burn')).status);
      return statuses;
    });
    await second;
    const statuses = (await Promise.all(clients)).flat();
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200)).toBe(true);
  });
});
