import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthWindow } from '../../src/directives/counters/windows.js';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';
import type { Reply } from '../helpers/instance.js';

// Quota and QuotaIp (issue 25): the original's users' quotas, per client key or per client IP,
// per UTC day and per UTC month, in RateLimit's store (embedded SQLite, or Redis with REDIS_URL),
// 429 with RateLimit's headers, and the status readable into memory. Names are unique per run so
// counters left in Redis by earlier runs never collide. In-process (helpers/in-process-apis.ts): the
// actor's store, embedded in the harness's data dir or Redis as REDIS_URL makes it; another client
// is a request from another address.

const REDIS_URL = process.env.ANVIL_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN = randomBytes(4).toString('hex');
const SECRET_KEY = `secret-${RUN}-0123456789`;
const DAY = 86_400_000;

function apiYaml(tag: string): string {
  const name = (what: string) => `q-${RUN}-${tag}-${what}`;
  return `key: quotas
endpoints:
  get /keyed:
    Quota: { directive: Quota, name: ${name('keyed')}, key: $.message.header.api-key, day: 3, target: quota }
    Reply: { directive: ModifyMessage, body: $.memory.quota }
  get /keyed/status:
    Quota: { directive: Quota, name: ${name('keyed')}, key: $.message.header.api-key, day: 3, count: false, target: quota }
    Reply: { directive: ModifyMessage, body: $.memory.quota }
  get /monthly:
    Quota: { directive: Quota, name: ${name('month')}, key: $.message.header.api-key, day: 100, month: 4, target: quota }
    Reply: { directive: ModifyMessage, body: $.memory.quota }
  get /ip:
    Quota: { directive: QuotaIp, name: ${name('ip')}, day: 2 }
    Ping: { directive: Ping }
  get /burst:
    Quota: { directive: Quota, name: ${name('burst')}, key: one-client, day: 20 }
    Ping: { directive: Ping }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;
}

/** Waits for the next UTC day when this one ends within 3 s (a real-time wait: the window is the behaviour under test). */
async function awayFromDayEnd(): Promise<void> {
  const left = DAY - (Date.now() % DAY);
  if (left < 3_000) await new Promise((r) => setTimeout(r, left + 250));
}

const nextMidnight = () => Date.now() - (Date.now() % DAY) + DAY;
/** Whole seconds from now until `at` (epoch ms); read before and after a request, they bound what the server saw. */
const secondsUntil = (at: number) => Math.ceil((at - Date.now()) / 1000);

function header(reply: Reply, name: string): string {
  return String(reply.headers[name]);
}

const backends = [
  { tag: 'embedded', env: { REDIS_URL: '' } },
  { tag: 'redis', env: { REDIS_URL } },
];

for (const backend of backends) {
  describe(`Quota and QuotaIp on the ${backend.tag} store`, () => {
    let anvil: InProcessApis;
    let redis: Redis | null = null;
    const keyed = (path: string, key = SECRET_KEY) => anvil.request(`/quotas/${path}`, { headers: { 'api-key': key } });

    /** Every key the store holds for this run's quotas (data keys only). */
    async function storedKeys(): Promise<string[]> {
      if (redis !== null) return (await redis.keys(`*q-${RUN}-*`)).filter((k) => !k.includes('kv-usage:'));
      const db = new Database(`${anvil.dataDir}/.anvil/kv.sqlite`, { readonly: true, fileMustExist: true });
      try {
        return (db.prepare('SELECT key FROM kv WHERE key LIKE ?').all(`%q-${RUN}-%`) as Array<{ key: string }>).map(
          (r) => r.key,
        );
      } finally {
        db.close();
      }
    }

    beforeAll(async () => {
      if (backend.tag === 'redis') {
        // Fails (never skips) when Redis is down: the Redis path is part of what is tested.
        redis = new Redis(REDIS_URL, {
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
          connectTimeout: 2_000,
        });
        redis.on('error', () => {});
        await redis.connect();
      }
      anvil = await startInProcess({ apis: { quotas: { 'api.yaml': apiYaml(backend.tag) } }, env: backend.env });
    });
    afterAll(async () => {
      await anvil?.dispose();
      if (redis !== null) {
        const keys = await redis.keys(`*q-${RUN}-*`).catch(() => []);
        if (keys.length > 0) await redis.del(...keys).catch(() => 0);
        redis.disconnect();
      }
    });

    it('admits `day` requests per client key, then 429 with retry-after until the UTC day ends', async () => {
      await awayFromDayEnd();
      for (let i = 1; i <= 3; i++) {
        const reply = await keyed('keyed');
        expect(reply.status).toBe(200);
        const status = reply.json();
        expect(status).toMatchObject({
          window: 'day',
          limit: 3,
          used: i,
          remaining: 3 - i,
          day: { limit: 3, used: i, remaining: 3 - i },
        });
        expect([header(reply, 'ratelimit-limit'), header(reply, 'ratelimit-remaining')]).toEqual(['3', String(3 - i)]);
        expect(reply.headers['retry-after']).toBeUndefined();
      }
      const before = secondsUntil(nextMidnight());
      const refused = await keyed('keyed');
      const after = secondsUntil(nextMidnight());
      expect(refused.status).toBe(429);
      expect(refused.json()).toEqual({ error: 'Too Many Requests: the daily quota of 3 requests is used up' });
      const retry = Number(header(refused, 'retry-after'));
      expect(retry).toBeGreaterThanOrEqual(after - 1);
      expect(retry).toBeLessThanOrEqual(before + 1);
      expect([header(refused, 'ratelimit-remaining'), header(refused, 'ratelimit-reset')]).toEqual([
        '0',
        String(retry),
      ]);
      // Another key is another client.
      expect((await keyed('keyed', 'another-key')).status).toBe(200);
    });

    it('reads the status with count: false, without counting', async () => {
      await awayFromDayEnd();
      for (let i = 0; i < 3; i++) {
        const reply = await keyed('keyed/status', 'status-reader');
        expect(reply.status).toBe(200);
        expect(reply.json()).toMatchObject({ window: 'day', limit: 3, used: 0, remaining: 3 });
        expect(reply.headers['ratelimit-limit']).toBeUndefined();
      }
      await keyed('keyed', 'status-reader');
      const status = (await keyed('keyed/status', 'status-reader')).json();
      expect(status).toMatchObject({ used: 1, remaining: 2 });
      expect(status.reset).toBeGreaterThan(0);
      expect(status.reset).toBeLessThanOrEqual(86_400);
    });

    it('counts a UTC month too: the tighter window decides', async () => {
      await awayFromDayEnd();
      const monthEnd = monthWindow(Date.now()).endsAt;
      for (let i = 1; i <= 4; i++) {
        const reply = await keyed('monthly');
        expect(reply.status).toBe(200);
        expect(reply.json()).toMatchObject({
          window: 'month',
          limit: 4,
          remaining: 4 - i,
          month: { used: i },
          day: { limit: 100, used: i },
        });
        expect(header(reply, 'ratelimit-limit')).toBe('4');
      }
      const before = secondsUntil(monthEnd);
      const refused = await keyed('monthly');
      const after = secondsUntil(monthEnd);
      expect(refused.status).toBe(429);
      expect(refused.json()).toEqual({ error: 'Too Many Requests: the monthly quota of 4 requests is used up' });
      const retry = Number(header(refused, 'retry-after'));
      expect(retry).toBeGreaterThanOrEqual(after - 1);
      expect(retry).toBeLessThanOrEqual(before + 1);
    });

    it('QuotaIp counts each client address on its own', async () => {
      await awayFromDayEnd();
      expect((await anvil.request('/quotas/ip')).status).toBe(200);
      expect((await anvil.request('/quotas/ip')).status).toBe(200);
      const refused = await anvil.request('/quotas/ip');
      expect([refused.status, header(refused, 'ratelimit-limit')]).toEqual([429, '2']);
      const elsewhere = await anvil.request('/quotas/ip', { ip: '127.0.0.2' });
      expect(elsewhere.status).toBe(200);
    });

    it('admits exactly the quota of concurrent requests', async () => {
      await awayFromDayEnd();
      const replies = await Promise.all(Array.from({ length: 35 }, () => anvil.request('/quotas/burst')));
      expect(replies.filter((r) => r.status === 200)).toHaveLength(20);
      expect(replies.filter((r) => r.status === 429)).toHaveLength(15);
    });

    it('keeps no client key in clear in the store', async () => {
      const keys = await storedKeys();
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.filter((k) => k.includes(SECRET_KEY) || k.includes('another-key'))).toEqual([]);
    });
  });
}
