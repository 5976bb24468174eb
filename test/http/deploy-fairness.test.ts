import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anvilCli } from '../helpers/cli.js';
import { manyRoutes } from '../helpers/hostile-files.js';
import { startInstance, type Reply, type TestInstance } from '../helpers/instance.js';
import { sample, scrapeMetrics } from '../helpers/metrics.js';
import { tarGz } from '../helpers/tarball.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 41, case 7: deploys wait for the one deploy worker fairly between public hosts (one host's
// thirty big deploys delay another host's deploy by one of them, not by thirty), and a host's
// deploys under way are bounded (--max-queued-deploys): past the bound, 429 for that host alone.

const OTHER = { 'public-host': 'other.localhost', 'public-host-key': 'other-host-key-0123456789' };
const small = (key: string) => `key: ${key}\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n`;

let anvil: TestInstance | null = null;
afterEach(async () => {
  await anvil?.dispose();
  anvil = null;
});

/** An instance whose data directory also has the public host other.localhost. */
async function withOtherHost(args: string[]): Promise<TestInstance> {
  const dataDir = mkdtempSync(join(tmpdir(), 'anvil-data-'));
  const added = anvilCli([
    'hosts',
    'add-public',
    OTHER['public-host'],
    '--env',
    'dev',
    '--key',
    OTHER['public-host-key'],
    '--data',
    dataDir,
  ]);
  expect(added.status, added.stderr).toBe(0);
  return startInstance({ dataDir, args });
}

function deployAs(on: TestInstance, yaml: string, credentials?: Record<string, string>): Promise<Reply> {
  const body = tarGz({ 'api.yaml': yaml });
  const headers = { 'content-type': 'application/gzip' };
  if (credentials === undefined) return on.admin('/anvil/api', { method: 'POST', body, headers });
  return on.request('/anvil/api', {
    host: 'admin.localhost',
    method: 'POST',
    body,
    headers: { ...headers, ...credentials },
  });
}

describe('deploys wait fairly between public hosts', () => {
  it("answers another host's small deploy after at most one or two of the thirty big deploys queued before it", async () => {
    anvil = await withOtherHost(['--max-queued-deploys', '40', '--deploy-timeout', '120s']);
    const on = anvil;
    const answered: string[] = [];
    const big = manyRoutes('placeholder', 5000).text;
    const flood = Array.from({ length: 30 }, (_, i) =>
      deployAs(on, big.replace('key: placeholder', `key: big-${i}`)).then((reply) => {
        answered.push(`A ${reply.status}`);
        return reply;
      }),
    );
    // Once the first is answered, the other 29 (received at once: small uploads) are waiting.
    await waitFor(() => answered.length > 0, { what: "the first of host A's deploys", timeoutMs: 120_000 });
    const other = await deployAs(on, small('neighbour'), OTHER);
    answered.push('B');
    expect(other.status, other.text).toBe(201);
    const replies = await Promise.all(flood);
    expect(replies.map((r) => r.status)).toEqual(Array(30).fill(201));

    // Host A's deploys answered before host B's: the first, the one in the worker when B's came, and
    // at most one more (should A's next have started while B's upload was still being received).
    // Deployed first-come first-served, B's would come after all 30.
    const before = answered.indexOf('B');
    expect(before, answered.join(', ')).toBeLessThanOrEqual(3);
    expect((await on.request('/anvil/api/neighbour', { host: 'admin.localhost', headers: OTHER })).status).toBe(200);
  }, 300_000);
});

describe('a public host has at most --max-queued-deploys deploys under way', () => {
  it("refuses that host's next deploys with 429, a code and retry-after, and takes another host's meanwhile", async () => {
    anvil = await withOtherHost(['--max-queued-deploys', '2', '--deploy-timeout', '60s']);
    const on = anvil;
    const big = manyRoutes('placeholder', 5000).text;
    const flood = Array.from({ length: 6 }, (_, i) => deployAs(on, big.replace('key: placeholder', `key: big-${i}`)));
    const other = deployAs(on, small('neighbour'), OTHER);
    const replies = await Promise.all(flood);
    expect((await other).status).toBe(201);

    const statuses = replies.map((r) => r.status);
    expect(
      statuses.every((s) => s === 201 || s === 429),
      statuses.join(', '),
    ).toBe(true);
    const refused = replies.filter((r) => r.status === 429);
    // Six at once, two under way: four refused (three should a deploy end before the last came).
    expect(refused.length, statuses.join(', ')).toBeGreaterThanOrEqual(3);
    const message =
      'Too Many Requests: this public host already has 2 deploys under way (being received, waiting for the deploy worker or in it), its limit (--max-queued-deploys); retry later';
    for (const reply of refused) {
      expect(reply.json()).toEqual({ error: message, errors: [message], code: 'ANVIL_ERR_DEPLOY_QUEUE_FULL' });
      expect(reply.headers['retry-after']).toBe('5');
    }
    const metrics = await scrapeMetrics(on);
    expect(sample(metrics, 'anvil_deploys_total', { host: 'localhost', result: 'queue_full' })).toBe(refused.length);
    expect(sample(metrics, 'anvil_deploys_total', { host: 'other.localhost', result: 'queue_full' })).toBeUndefined();

    // The slots are given back: the host deploys again.
    expect((await deployAs(on, small('after'))).status).toBe(201);
  }, 120_000);
});
