import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { Agent, request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellPid, settledTaskCount } from '../helpers/cells.js';
import { eventually, startInstance, type Reply, type TestInstance } from '../helpers/instance.js';

// RateLimit (SPEC §7, SECURITY.md "Lessons from gateways' rate limiters"): fixed windows counted
// in the shared store, one atomic increment per request, so a concurrent burst served by two
// threads admits exactly the limit. The same suite runs against the embedded store and Redis.
//
// Labels are unique per run (`rl-<random>-…`), so counters left in Redis by earlier runs never
// collide. Windows are aligned to the clock (minute / UTC day): a burst that straddled the end of
// a minute would be split over two windows, so each burst waits for a fresh minute when the current
// one ends within 3 s.

const REDIS_URL = process.env.ANVIL_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN = randomBytes(4).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function apiYaml(tag: string): string {
  return `key: limits
endpoints:
  get /ping:
    Ping: { directive: Ping }
  get /burst:
    Limit: { directive: RateLimit, path: rl-${RUN}-${tag}-burst, minuteTotal: 20 }
    Ping: { directive: Ping }
  get /many:
    Limit: { directive: RateLimit, path: rl-${RUN}-${tag}-many, minuteTotal: 100000 }
    Ping: { directive: Ping }
  get /per-ip:
    Limit: { directive: RateLimit, path: rl-${RUN}-${tag}-ip, minuteIp: 3 }
    Ping: { directive: Ping }
  get /daily:
    Limit: { directive: RateLimit, path: rl-${RUN}-${tag}-day, dayIp: 3 }
    Ping: { directive: Ping }
`;
}

/** Waits for the next window when the current one (minute or UTC day) ends within 3 s (a real-time wait: the window is the behaviour under test). */
async function awayFromWindowEnd(spanMs: number): Promise<void> {
  const left = spanMs - (Date.now() % spanMs);
  if (left < 3_000) await sleep(left + 250);
}

/** Requests from another loopback address (127.0.0.2 is loopback too on Linux): another client IP. */
async function requestFrom(
  agent: Agent,
  anvil: TestInstance,
  path: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await undiciRequest(`http://127.0.0.1:${anvil.port}${path}`, {
    headers: { host: 'localhost', ...headers },
    dispatcher: agent,
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text, json: () => JSON.parse(text) };
}

function header(reply: Reply, name: string): string {
  const value = reply.headers[name];
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** Seconds, as an integer in [1, max]. */
function expectSeconds(value: string, max: number): number {
  expect(value).toMatch(/^\d+$/);
  const n = Number(value);
  expect(n).toBeGreaterThanOrEqual(1);
  expect(n).toBeLessThanOrEqual(max);
  return n;
}

/** The count of a window counter (`<count>@<window end>`, the end a whole minute or day). */
function windowCount(value: string | null): number {
  const match = /^(\d+)@(\d+)$/.exec(value ?? '');
  expect(match, `a window counter: ${value}`).not.toBeNull();
  expect(Number(match![2]) % 60_000).toBe(0);
  return Number(match![1]);
}

interface Backend {
  name: string;
  env: Record<string, string>;
  /** Checks the store can be reached (throws otherwise: a missing Redis fails the suite). */
  check(): Promise<void>;
  /** The counters of a label in the store: key → count (a window counter holds `<count>@<window end>`). */
  counters(anvil: TestInstance, label: string): Promise<Record<string, number>>;
  close(): Promise<void>;
}

const embedded: Backend = {
  name: 'embedded store (SQLite, the default)',
  env: { REDIS_URL: '' },
  check: async () => {},
  counters: async (anvil, label) => {
    const db = new Database(`${anvil.dataDir}/.anvil/kv.sqlite`, { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare('SELECT key, value FROM kv WHERE ns = ? AND key LIKE ?')
        .all('localhost/dev/limits', `ratelimit:${label}:%`) as Array<{ key: string; value: string }>;
      return Object.fromEntries(rows.map((r) => [r.key, windowCount(r.value)]));
    } finally {
      db.close();
    }
  },
  close: async () => {},
};

let redis: Redis | null = null;
const redisBackend: Backend = {
  name: 'Redis store (REDIS_URL)',
  env: { REDIS_URL },
  check: async () => {
    // Fails (never skips) when Redis is down: this suite exists to prove the Redis path.
    redis = new Redis(REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 2_000,
    });
    redis.on('error', () => {}); // the rejected connect() below carries the error
    try {
      await redis.connect();
      const pong = await redis.ping();
      if (pong !== 'PONG') throw new Error(`PING answered ${pong}`);
    } catch (error) {
      throw new Error(
        `Redis at ${REDIS_URL} cannot be reached (${(error as Error).message}): this suite needs it, it does not skip`,
      );
    }
  },
  counters: async (_anvil, label) => {
    const keys = await redis!.keys(`*ratelimit:${label}:*`);
    const out: Record<string, number> = {};
    for (const key of keys) {
      out[key.slice(key.indexOf('ratelimit:'))] = windowCount(await redis!.get(key));
      const ttl = await redis!.pttl(key);
      expect(ttl, `${key} has an expiry`).toBeGreaterThan(0);
    }
    return out;
  },
  close: async () => {
    if (redis === null) return;
    const keys = await redis.keys(`*rl-${RUN}-*`).catch(() => []);
    if (keys.length > 0) await redis.del(...keys).catch(() => 0);
    redis.disconnect();
    redis = null;
  },
};

for (const backend of [embedded, redisBackend]) {
  describe(`RateLimit on the ${backend.name}`, () => {
    const tag = backend === embedded ? 'embedded' : 'redis';
    let anvil: TestInstance;
    let baseline = 0;
    const other = new Agent({ localAddress: '127.0.0.2', keepAliveTimeout: 1_000 });
    const threads = () => readdirSync(`/proc/${cellPid(anvil.pid, 0)}/task`).length - baseline;

    /** Set when the store cannot be reached: every test then fails with it (none is skipped). */
    let unreachable: Error | null = null;
    const ready = () => {
      if (unreachable !== null) throw unreachable;
    };

    beforeAll(async () => {
      await backend.check().catch((error: Error) => {
        unreachable = error;
      });
      if (unreachable !== null) return;
      anvil = await startInstance({
        apis: { limits: { 'api.yaml': apiYaml(tag) } },
        // One cell, so the only actor threads in it are this API's (counted in /proc); threads of its
        // own from the start (--shared-threads 0), so that four requests in flight start the second.
        args: ['--max-threads', '2', '--thread-concurrency', '4', '--cells', '1', '--shared-threads', '0'],
        env: backend.env,
      });
      baseline = await settledTaskCount(cellPid(anvil.pid, 0));
    });
    afterAll(async () => {
      await other.close();
      await anvil?.dispose();
      await backend.close();
    });

    it('admits exactly 20 of 50 concurrent requests, served by two threads', async () => {
      ready();
      expect(threads()).toBe(0);
      expect((await anvil.request('/limits/ping')).status).toBe(200);
      // The first request gave the API its thread (the tests' instances keep no spare threads).
      await eventually(() => threads() === 1);

      await awayFromWindowEnd(60_000);
      const replies = await Promise.all(Array.from({ length: 50 }, () => anvil.request('/limits/burst')));
      // Four requests per thread at most: the burst made the actor start its second thread.
      await eventually(() => threads() === 2);

      const ok = replies.filter((r) => r.status === 200);
      const refused = replies.filter((r) => r.status === 429);
      expect({ ok: ok.length, refused: refused.length }).toEqual({ ok: 20, refused: 30 });

      // Each admitted request saw its own count: remaining 19, 18, … 0, each once.
      expect(ok.map((r) => Number(header(r, 'ratelimit-remaining'))).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 20 }, (_, i) => i),
      );
      for (const reply of ok) {
        expect(reply.json()).toEqual({ message: 'pong' });
        expect(header(reply, 'ratelimit-limit')).toBe('20');
        expectSeconds(header(reply, 'ratelimit-reset'), 60);
        expect(reply.headers['retry-after']).toBeUndefined();
      }
      for (const reply of refused) {
        expect(reply.headers['content-type']).toMatch(/^application\/json/);
        expect(reply.json()).toEqual({ error: 'Too Many Requests' });
        expect(header(reply, 'ratelimit-limit')).toBe('20');
        expect(header(reply, 'ratelimit-remaining')).toBe('0');
        const retry = expectSeconds(header(reply, 'retry-after'), 60);
        expect(Number(header(reply, 'ratelimit-reset'))).toBe(retry);
      }

      // The store holds one counter for this minute, incremented once per request.
      const counters = await backend.counters(anvil, `rl-${RUN}-${tag}-burst`);
      expect(Object.values(counters)).toEqual([50]);

      // The window is still full.
      expect((await anvil.request('/limits/burst')).status).toBe(429);
    });

    it('loses no increment: 240 concurrent requests, 240 distinct counts, a counter of 240', async () => {
      ready();
      // Below the limit, so every request is admitted; each must have seen a count of its own.
      // A read-then-write increment (Kong#5311) shows here as repeated counts and a smaller total.
      await awayFromWindowEnd(60_000);
      for (let round = 1; round <= 3; round++) {
        const replies = await Promise.all(Array.from({ length: 80 }, () => anvil.request('/limits/many')));
        expect(replies.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
        const remaining = replies.map((r) => Number(header(r, 'ratelimit-remaining')));
        expect(new Set(remaining).size, 'every request saw its own count').toBe(80);
        const counters = await backend.counters(anvil, `rl-${RUN}-${tag}-many`);
        expect(Object.values(counters)).toEqual([80 * round]);
        expect(Math.min(...remaining)).toBe(100_000 - 80 * round);
      }
      await eventually(() => threads() === 2);
    });

    it('minuteIp counts each client IP on its own (127.0.0.1 and 127.0.0.2), whatever x-forwarded-for says', async () => {
      ready();
      await awayFromWindowEnd(60_000);
      for (let i = 0; i < 3; i++) {
        const reply = await anvil.request('/limits/per-ip');
        expect(reply.status).toBe(200);
        expect(header(reply, 'ratelimit-limit')).toBe('3');
        expect(header(reply, 'ratelimit-remaining')).toBe(String(2 - i));
      }
      expect((await anvil.request('/limits/per-ip')).status).toBe(429);
      // A client cannot claim another address.
      expect((await anvil.request('/limits/per-ip', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(
        429,
      );

      for (let i = 0; i < 3; i++) {
        const reply = await requestFrom(other, anvil, '/limits/per-ip');
        expect(reply.status, reply.text).toBe(200);
        expect(header(reply, 'ratelimit-remaining')).toBe(String(2 - i));
      }
      const over = await requestFrom(other, anvil, '/limits/per-ip');
      expect(over.status).toBe(429);
      expect(over.json()).toEqual({ error: 'Too Many Requests' });

      const counters = await backend.counters(anvil, `rl-${RUN}-${tag}-ip`);
      expect(Object.entries(counters).sort()).toEqual([
        [`ratelimit:rl-${RUN}-${tag}-ip:minute:ip:127.0.0.1`, 5],
        [`ratelimit:rl-${RUN}-${tag}-ip:minute:ip:127.0.0.2`, 4],
      ]);
    });

    it('dayIp admits 3 per client IP per UTC day', async () => {
      ready();
      await awayFromWindowEnd(86_400_000);
      for (let i = 0; i < 3; i++) expect((await anvil.request('/limits/daily')).status).toBe(200);
      const over = await anvil.request('/limits/daily');
      expect(over.status).toBe(429);
      expect(header(over, 'ratelimit-limit')).toBe('3');
      expect(header(over, 'ratelimit-remaining')).toBe('0');
      // Until the end of the UTC day.
      const untilMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000);
      const retry = expectSeconds(header(over, 'retry-after'), 86_400);
      expect(Math.abs(retry - untilMidnight)).toBeLessThanOrEqual(2);
      // Another client still has its own 3.
      expect((await requestFrom(other, anvil, '/limits/daily')).status).toBe(200);
    });
  });
}
