import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLoad } from '../helpers/background-load.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { waitFor } from '../helpers/wait-for.js';

// Redis goes away under load (REDIS_URL mode): each directive that uses it follows its documented
// policy, no process dies, everything serves again once Redis is back, and jobs accepted with 202
// before the outage run exactly once.

const api = (upstreamPort: number) => ({
  'api.yaml': `key: outage
before:
  Connect: { directive: DatabaseConnect }
endpoints:
  get /open:
    Limit: { directive: RateLimit, minuteTotal: 1000000 }
    Pong: { directive: Ping }
  get /closed:
    Limit: { directive: RateLimit, minuteTotal: 1000000, failOpen: false }
    Pong: { directive: Ping }
  get /cached:
    Fetch: { directive: Pull, host: "http://127.0.0.1:${upstreamPort}", path: /count, target: upstream, cache: 60 }
    Reply: { directive: ModifyMessage, body: { fetched: true } }
  get /plain:
    Pong: { directive: Ping }
  post /work:
    Queue: { directive: ForTheWorker, identifier: true }
    Store: { directive: DatabaseQuery, sql: "INSERT INTO runs (id) VALUES (?)", params: [$.id], mode: run }
  get /runs:
    Count: { directive: DatabaseQuery, sql: "SELECT count(*) AS runs, count(DISTINCT id) AS ids FROM runs", target: count, mode: get }
    Reply: { directive: ModifyMessage, body: $.memory.count }
`,
  'Assets/db/001.sql': 'CREATE TABLE runs (id TEXT NOT NULL);\n',
});

const statusOf = async (anvil: TestInstance, path: string) => (await anvil.request(`/outage${path}`)).status;

describe('Redis outage under load', () => {
  let redis: PrivateRedis;
  let upstream: Upstream;
  let anvil: TestInstance;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    upstream = await startUpstream();
    anvil = await startInstance({
      apis: { outage: api(upstream.port) },
      env: { REDIS_URL: redis.url, ANVIL_EGRESS_ALLOW: '127.0.0.1' },
      args: ['--job-backoff', '100ms', '--cells', '1'],
    });
  });
  afterAll(async () => {
    redis?.unpause();
    await anvil?.dispose();
    await upstream?.close();
    await redis?.kill();
  });

  for (const [fault, stop, start] of [
    ['is killed', (r: PrivateRedis) => r.kill(), (r: PrivateRedis) => r.resume()],
    ['hangs (SIGSTOP)', async (r: PrivateRedis) => r.pause(), async (r: PrivateRedis) => r.unpause()],
  ] as const) {
    it(`when Redis ${fault}: RateLimit fails open or closed as asked, Pull's cache is skipped, other endpoints serve, and all recovers`, async () => {
      expect(await statusOf(anvil, '/open')).toBe(200);
      expect(await statusOf(anvil, '/cached')).toBe(200);
      // Steady traffic on endpoints that use Redis (RateLimit failing open) and on one that does not.
      const loads = [backgroundLoad(anvil, '/outage/open', 3), backgroundLoad(anvil, '/outage/plain', 3)];
      await stop(redis);
      const during = await Promise.all([
        statusOf(anvil, '/open'),
        statusOf(anvil, '/closed'),
        statusOf(anvil, '/cached'),
        statusOf(anvil, '/plain'),
      ]);
      expect(during).toEqual([200, 503, 200, 200]);
      await start(redis);
      await waitFor(async () => (await statusOf(anvil, '/closed')) === 200, {
        what: 'RateLimit with failOpen: false to pass again',
        timeoutMs: 10_000,
      });
      expect(await statusOf(anvil, '/open')).toBe(200);
      expect(await statusOf(anvil, '/cached')).toBe(200);
      await Promise.all(loads.map((l) => l.stop()));
      for (const load of loads) expect(load.statuses().filter((s) => s !== 200)).toEqual([]);
      expect(loads[1]!.replies.length).toBeGreaterThan(10);
      expect(anvil.output()).toContain('RateLimit: the store cannot be reached');
      expect(anvil.child.exitCode).toBeNull();
    });
  }

  it('runs every job accepted with 202 before the outage exactly once after it', async () => {
    redis.pause();
    // Accepted while Redis hangs? The queue cannot take them: each is refused, none half-accepted.
    const refused = await anvil.request('/outage/work', {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect([202, 503]).toContain(refused.status);
    redis.unpause();
    const accepted: string[] = [];
    for (let i = 0; i < 20; i++) {
      const reply = await anvil.request('/outage/work', {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(reply.status).toBe(202);
      accepted.push(reply.json().id);
    }
    redis.pause();
    await new Promise((r) => setTimeout(r, 2_000));
    redis.unpause();
    const expected = accepted.length + (refused.status === 202 ? 1 : 0);
    await waitFor(async () => (await anvil.request('/outage/runs')).json().runs >= expected, {
      what: `${expected} job runs`,
      timeoutMs: 20_000,
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await anvil.request('/outage/runs')).json()).toEqual({ runs: expected, ids: expected });
  });
});
