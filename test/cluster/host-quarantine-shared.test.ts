import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCellProcess } from '../helpers/cells.js';
import { pingApi, startInstance, type TestInstance } from '../helpers/instance.js';
import { killerApi } from '../helpers/killer-api.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { waitFor } from '../helpers/wait-for.js';

// Two instances on one Redis share the blame of a public host (front/scheduling/host-faults.ts) on the same
// fault board as the per-API decisions: a host suspect on one starts its fresh APIs in its
// quarantine cell on the other too (a balancer may send the next fresh key there), and is moved
// there when it is moved on one.
const REDIS_URL = process.env.ANVIL_TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('two instances sharing Redis', () => {
  const instances: TestInstance[] = [];

  beforeAll(async () => {
    const env = { REDIS_URL, ANVIL_REDIS_PREFIX: `anvil-test-${randomUUID()}:` };
    // As in test/http/sandbox-fatal.test.ts: room for the allocations to abort their cell.
    const args = ['--cells', '1', '--request-timeout', '20s', '--max-directive-cpu', '10s'];
    const apis = {
      'bomb-1': killerApi('bomb-1', ['ArrayFill']),
      'bomb-2': killerApi('bomb-2', ['ArrayFill']),
      fresh: pingApi('fresh'),
    };
    for (let i = 0; i < 2; i++) instances.push(await startInstance({ apis, env, args }));
  });

  afterAll(async () => {
    await Promise.all(instances.map((a) => a.dispose()));
  });

  it("a host suspect or moved on one instance is so on the other: its fresh APIs start in the host's quarantine cell there", async () => {
    const [one, two] = instances as [TestInstance, TestInstance];
    const logged = (anvil: TestInstance, msg: string) =>
      anvil.logLines().filter((l) => l.msg === msg && l.host === 'localhost');
    expect((await one.request('/bomb-1/ping')).status).toBe(200);
    expect(hasCellProcess(two.pid, 1)).toBe(false);

    // A first abort on one: the host is suspect there, and on two.
    expect((await one.request('/bomb-1/ArrayFill')).status).toBe(502);
    await waitFor(() => logged(one, 'host suspect: its APIs that start from now on start in its quarantine cell')[0], {
      what: 'the host suspect on one',
      timeoutMs: 15_000,
    });
    await waitFor(() => logged(two, 'host suspect by another instance')[0], { what: 'the host suspect on two' });

    // An API of that host never run on two starts in the host's quarantine cell there (cell 1 beside
    // the one base cell), not in the shared cell.
    expect((await two.request('/fresh/ping')).status).toBe(200);
    expect(hasCellProcess(two.pid, 1)).toBe(true);
    expect(sample(await scrapeMetrics(two), 'anvil_host_quarantine', { host: 'localhost', stage: 'new-apis' })).toBe(1);

    // A second API of the host aborting a cell on one moves the host: on two as well.
    expect((await one.request('/bomb-2/ArrayFill')).status).toBe(502);
    await waitFor(
      () => logged(one, 'host moved: its APIs aborted cells too often; all of them now run in its quarantine cell')[0],
      { what: 'the host moved on one', timeoutMs: 15_000 },
    );
    await waitFor(() => logged(two, 'host moved by another instance')[0], { what: 'the host moved on two' });
    expect(sample(await scrapeMetrics(two), 'anvil_host_quarantine', { host: 'localhost', stage: 'all-apis' })).toBe(1);
    const overview = (await two.admin('/anvil/overview')).json();
    expect(overview.faults).toMatchObject({ stage: 'all-apis' });
    for (const anvil of instances) expect(anvil.child.exitCode).toBeNull();
  }, 90_000);
});
