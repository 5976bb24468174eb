import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { KvBackend } from '../../src/engine/kv-store.js';
import { openKvBackend } from '../../src/directives/stores/open-kv.js';
import { redisKey, usageKeys } from '../../src/directives/stores/redis-kv.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { kvStoreContract } from './kv-contract.js';
import { windowCounterContract } from './window-counter-contract.js';

// Needs a running Redis: REDIS_URL, else redis://127.0.0.1:6379. When it cannot be reached every
// test FAILS (never skips). Keys of this run live under a prefix of their own, deleted afterwards.
// The worker-thread test loads dist/directives/stores (build first: `npx tsc -p tsconfig.build.json`; npm test does it in pretest).

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisPrefix = `anvil-test-${randomUUID().slice(0, 12)}:`;
const shownUrl = redisUrl.replace(/\/\/[^@/]*@/, '//***@');
const temp = useTempDir('anvil-kv-redis-');
let admin: Redis;

async function keysUnderPrefix(): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

async function connectAdmin(): Promise<void> {
  admin = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  admin.on('error', () => {});
  try {
    await admin.connect();
    await admin.ping();
  } catch (error) {
    throw new Error(
      `the Redis key-value store tests need a Redis at ${shownUrl} (set REDIS_URL): ${(error as Error).message}`,
    );
  }
}

// Checked before every test, so that without Redis each test FAILS with this message (a failing
// beforeAll would only mark them skipped).
let reachable: Promise<void> | undefined;
beforeEach(async () => {
  reachable ??= connectAdmin();
  await reachable;
});

afterAll(async () => {
  if (admin?.status !== 'ready') return;
  const keys = await keysUnderPrefix();
  for (let i = 0; i < keys.length; i += 500) await admin.del(...keys.slice(i, i + 500));
  await admin.quit();
});

kvStoreContract(
  'Redis',
  async () => openKvBackend({ dataDir: temp.path(), redisUrl, redisPrefix }),
  undefined,
  () => ({ dataDir: temp.path(), redisUrl, redisPrefix }),
);

// Redis keeps its own clock (it only forgets keys); the counters' clock is the injected one.
windowCounterContract('Redis', async () => openKvBackend({ dataDir: temp.path(), redisUrl, redisPrefix }));

describe('Redis key-value store', () => {
  const opened: KvBackend[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((backend) => backend.close()));
  });
  const open = (url = redisUrl, prefix = redisPrefix): KvBackend => {
    const backend = openKvBackend({ dataDir: temp.path(), redisUrl: url, redisPrefix: prefix });
    opened.push(backend);
    return backend;
  };

  it('keys are <prefix><byte length of ns>:<ns>:<key>, and no SQLite file is made', async () => {
    const kv = open().namespace('localhost/dev/users');
    await kv.set('hits', 'v');
    expect(redisKey(redisPrefix, 'localhost/dev/users', 'hits')).toBe(`${redisPrefix}19:localhost/dev/users:hits`);
    expect(await admin.get(`${redisPrefix}19:localhost/dev/users:hits`)).toBe('v');
    expect(redisKey('anvil:', 'é', 'k')).toBe('anvil:2:é:k');
    expect(existsSync(join(temp.path(), '.anvil', 'kv.sqlite'))).toBe(false);
  });

  it('a key spelling another namespace’s full Redis key lands elsewhere', async () => {
    const backend = open();
    await backend.namespace('victim').set('k', 'secret');
    const victimKey = redisKey(redisPrefix, 'victim', 'k');
    const attacker = backend.namespace('attacker');
    for (const hostile of [
      victimKey,
      victimKey.slice(redisPrefix.length),
      `../${victimKey.slice(redisPrefix.length)}`,
      '6:victim:k',
    ]) {
      expect(await attacker.get(hostile)).toBeNull();
      await attacker.set(hostile, 'overwritten');
      await attacker.delete(hostile);
    }
    expect(await admin.get(victimKey)).toBe('secret');
  });

  it('increment is one script: the counter carries a PTTL from its first increment', async () => {
    const kv = open().namespace('ttl');
    await kv.increment('c', 1, 10_000);
    const pttl = await admin.pttl(redisKey(redisPrefix, 'ttl', 'c'));
    expect(pttl).toBeGreaterThan(9000);
    expect(pttl).toBeLessThanOrEqual(10_000);
  });

  it('counts a namespace beside its keys: bytes, sizes per key, and the expiry it reaps', async () => {
    const kv = open().namespace('counted', { maxBytes: 100 });
    await kv.set('a', 'xyz');
    await kv.set('b', 'é', 60_000);
    await kv.increment('c', 10, 60_000);
    const keys = usageKeys(redisPrefix, 'counted');
    expect(keys.bytes).toBe(`${redisPrefix}kv-usage:7:counted:bytes`);
    expect(await admin.get(keys.bytes)).toBe('10');
    expect(await admin.hgetall(keys.sizes)).toEqual({ a: '4', b: '3', c: '3' });
    expect(await admin.zrange(keys.expiry, 0, -1)).toEqual(['b', 'c']);
    await kv.delete('b');
    expect(await admin.get(keys.bytes)).toBe('7');
    expect(await admin.zrange(keys.expiry, 0, -1)).toEqual(['c']);
  });

  it('a store that cannot reach Redis rejects every call with a clear error, without the password', async () => {
    const started = Date.now();
    const kv = open('redis://user:s3cret@127.0.0.1:1').namespace('down');
    for (const call of [kv.get('k'), kv.set('k', 'v'), kv.delete('k'), kv.increment('k', 1, 1000)]) {
      const error = await call.then(
        () => undefined,
        (e: unknown) => e as Error & { code: string; status: number },
      );
      expect(error).toMatchObject({ code: 'ANVIL_ERR_KV_UNAVAILABLE', status: 503 });
      expect(error?.message).toMatch(
        /key-value store unavailable: cannot reach Redis at redis:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:1/,
      );
      expect(error?.message).not.toContain('s3cret');
    }
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
