import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KvBackend, KvBackendOptions, KvStore } from '../../src/engine/kv-store.js';
import { setIfAbsentContract } from './kv-contract-set-if-absent.js';
import { raceIncrements } from './kv-workers.js';

/** Moves the backend's injected clock forward. Without one the contract waits in real time. */
export type AdvanceClock = (ms: number) => void | Promise<void>;

/** Added to real-time waits so Redis has surely expired a key (it expires at ms granularity). */
const REAL_TIME_SLACK_MS = 60;
const MiB = 1024 * 1024;

/**
 * The contract every KvBackend keeps (in the manner of undici's cacheStoreTests): the embedded and
 * the Redis test files both call it.
 *
 * - `makeBackend` opens a NEW backend instance (its own connection) on the store under test; it
 *   is called several times per test, and the contract closes them all after each test.
 * - `advanceClock` moves the clock the backend was given; without it TTLs are short (150 ms) real
 *   ones and the contract sleeps.
 * - `workerOptions` tells a worker thread how to open its own backend on the same store, for the
 *   cross-thread counting test (the workers load dist/: build first, `npm test` does).
 *
 * Every test works in namespaces of its own (`<tag>/…`), so a store shared by the whole run (Redis)
 * carries nothing from one test to the next.
 */
export function kvStoreContract(
  name: string,
  makeBackend: () => Promise<KvBackend>,
  advanceClock: AdvanceClock | undefined,
  workerOptions: () => KvBackendOptions,
): void {
  describe(`KvStore contract: ${name}`, () => {
    let opened: KvBackend[] = [];
    let tag = '';
    let tests = 0;

    beforeEach(() => {
      tag = `t${++tests}-${randomUUID().slice(0, 8)}`;
    });
    afterEach(async () => {
      const closing = opened;
      opened = [];
      await Promise.all(closing.map((backend) => backend.close()));
    });

    const open = async (): Promise<KvBackend> => {
      const backend = await makeBackend();
      opened.push(backend);
      return backend;
    };
    /** A namespace of this test only. */
    const ns = (suffix = 'api'): string => `${tag}/${suffix}`;
    const store = async (suffix?: string): Promise<KvStore> => (await open()).namespace(ns(suffix));
    /** Lets `ms` pass: exactly on the injected clock, else a bit more in real time. */
    const elapse = async (ms: number): Promise<void> => {
      if (advanceClock) await advanceClock(ms);
      else await sleep(ms + REAL_TIME_SLACK_MS);
    };
    /** Tests that need the injected clock: not registered at all for a backend on real time. */
    const clockOnly = (title: string, test: () => Promise<void>): void => {
      if (advanceClock) it(title, test);
    };

    describe('get, set, delete', () => {
      it('gives null for a missing key', async () => {
        const kv = await store();
        expect(await kv.get('missing')).toBeNull();
      });

      it('sets, overwrites and deletes', async () => {
        const kv = await store();
        await kv.set('k', 'one');
        expect(await kv.get('k')).toBe('one');
        await kv.set('k', 'two');
        expect(await kv.get('k')).toBe('two');
        await kv.delete('k');
        expect(await kv.get('k')).toBeNull();
        await expect(kv.delete('k')).resolves.toBeUndefined();
        await expect(kv.delete('never-set')).resolves.toBeUndefined();
      });

      it('gives values back exactly as set', async () => {
        const kv = await store();
        const values = [
          '',
          ' ',
          '0',
          '007',
          '-0',
          'héllo 🌍',
          'a\0b',
          '\r\n\t',
          '{"a":[1,2]}',
          '\uFEFFbom',
          'x'.repeat(100_000),
        ];
        for (const [i, value] of values.entries()) await kv.set(`v${i}`, value);
        for (const [i, value] of values.entries()) expect(await kv.get(`v${i}`)).toBe(value);
      });

      it('is one store across backend instances (connections)', async () => {
        const a = (await open()).namespace(ns());
        const b = (await open()).namespace(ns());
        await a.set('shared', 'from a');
        expect(await b.get('shared')).toBe('from a');
        await b.delete('shared');
        expect(await a.get('shared')).toBeNull();
      });

      it('rejects every call once the backend is closed', async () => {
        const backend = await open();
        const kv = backend.namespace(ns());
        await backend.close();
        await expect(kv.get('k')).rejects.toMatchObject({ code: 'ANVIL_ERR_KV_CLOSED' });
        await expect(kv.set('k', 'v')).rejects.toMatchObject({ code: 'ANVIL_ERR_KV_CLOSED' });
        await expect(kv.increment('k', 1, 1000)).rejects.toMatchObject({ code: 'ANVIL_ERR_KV_CLOSED' });
        await expect(kv.countInWindow('k', 1, { endsAt: 60_000, spanMs: 60_000 }, 1000)).rejects.toMatchObject({
          code: 'ANVIL_ERR_KV_CLOSED',
        });
        await expect(backend.close()).resolves.toBeUndefined();
      });
    });

    setIfAbsentContract({
      store,
      quotaOf: async (maxBytes, suffix) => (await open()).namespace(ns(suffix), { maxBytes }),
      elapse,
    });

    describe('expiry', () => {
      it('forgets a value once its ttl has passed', async () => {
        const kv = await store();
        await kv.set('short', 'v', 150);
        await kv.set('forever', 'v');
        expect(await kv.get('short')).toBe('v');
        await elapse(150);
        expect(await kv.get('short')).toBeNull();
        expect(await kv.get('forever')).toBe('v');
      });

      it('set without ttl drops an earlier ttl; set with ttl gives one', async () => {
        const kv = await store();
        await kv.set('p', '1', 150);
        await kv.set('p', '2');
        await kv.set('q', '1');
        await kv.set('q', '2', 150);
        await elapse(150);
        expect(await kv.get('p')).toBe('2');
        expect(await kv.get('q')).toBeNull();
      });

      it('a set after expiry starts afresh', async () => {
        const kv = await store();
        await kv.set('k', 'old', 150);
        await elapse(150);
        await kv.set('k', 'new');
        expect(await kv.get('k')).toBe('new');
      });

      clockOnly('expires exactly at the ttl (injected clock)', async () => {
        const kv = await store();
        await kv.set('k', 'v', 1000);
        await elapse(999);
        expect(await kv.get('k')).toBe('v');
        await elapse(1);
        expect(await kv.get('k')).toBeNull();
      });
    });

    describe('increment', () => {
      it('starts a missing counter at `by` with the ttl given', async () => {
        const kv = await store();
        const first = await kv.increment('c', 3, 1000);
        expect(first.value).toBe(3);
        expect(first.ttlMs).toBeGreaterThan(900);
        expect(first.ttlMs).toBeLessThanOrEqual(1000);
        if (advanceClock) expect(first.ttlMs).toBe(1000);
        expect(await kv.get('c')).toBe('3');
      });

      it('adds `by`, negative and zero included', async () => {
        const kv = await store();
        expect((await kv.increment('c', 1, 1000)).value).toBe(1);
        expect((await kv.increment('c', 4, 1000)).value).toBe(5);
        expect((await kv.increment('c', -7, 1000)).value).toBe(-2);
        expect((await kv.increment('c', 0, 1000)).value).toBe(-2);
        expect((await kv.increment('zero', 0, 1000)).value).toBe(0);
        expect(await kv.get('c')).toBe('-2');
      });

      it('keeps the ttl of the first increment (fixed window)', async () => {
        const kv = await store();
        await kv.increment('w', 1, 1000);
        await elapse(300);
        const second = await kv.increment('w', 1, 60_000);
        expect(second.value).toBe(2);
        expect(second.ttlMs).toBeGreaterThan(0);
        expect(second.ttlMs).toBeLessThanOrEqual(700);
        if (advanceClock) expect(second.ttlMs).toBe(700);
      });

      it('restarts at `by` after the counter expired', async () => {
        const kv = await store();
        await kv.increment('r', 4, 150);
        await kv.increment('r', 4, 150);
        await elapse(150);
        expect(await kv.get('r')).toBeNull();
        const restarted = await kv.increment('r', 1, 1000);
        expect(restarted.value).toBe(1);
        expect(restarted.ttlMs).toBeGreaterThan(900);
      });

      clockOnly('counts until the ttl and restarts exactly at it (injected clock)', async () => {
        const kv = await store();
        await kv.increment('b', 1, 1000);
        await elapse(999);
        expect(await kv.increment('b', 1, 1000)).toEqual({ value: 2, ttlMs: 1 });
        await elapse(1);
        expect(await kv.increment('b', 1, 1000)).toEqual({ value: 1, ttlMs: 1000 });
      });

      it('adds to an integer string written by set, and gives it an expiry', async () => {
        const kv = await store();
        await kv.set('n', '41');
        const result = await kv.increment('n', 1, 150);
        expect(result.value).toBe(42);
        expect(result.ttlMs).toBeLessThanOrEqual(150);
        expect(await kv.get('n')).toBe('42');
        await elapse(150);
        expect(await kv.get('n')).toBeNull();
      });

      it('rejects on a value that is not an integer and leaves it as it was', async () => {
        const kv = await store();
        for (const value of ['abc', '1.5', '', ' 1']) {
          await kv.set('s', value);
          await expect(kv.increment('s', 1, 1000)).rejects.toMatchObject({ code: 'ANVIL_ERR_KV_NOT_INTEGER' });
          expect(await kv.get('s')).toBe(value);
        }
      });

      it('rejects a result outside ±(2^53-1) and leaves the counter unchanged', async () => {
        const kv = await store();
        await kv.set('max', String(Number.MAX_SAFE_INTEGER - 1));
        expect((await kv.increment('max', 1, 1000)).value).toBe(Number.MAX_SAFE_INTEGER);
        await expect(kv.increment('max', 1, 1000)).rejects.toMatchObject({ code: 'ANVIL_ERR_KV_OUT_OF_RANGE' });
        expect(await kv.get('max')).toBe(String(Number.MAX_SAFE_INTEGER));
        await kv.set('min', String(Number.MIN_SAFE_INTEGER));
        await expect(kv.increment('min', -1, 1000)).rejects.toMatchObject({ code: 'ANVIL_ERR_KV_OUT_OF_RANGE' });
        expect(await kv.get('min')).toBe(String(Number.MIN_SAFE_INTEGER));
      });

      it('counts exactly: 2 worker threads x 50 concurrent increments, each thread its own backend', async () => {
        const kv = await store('race'); // opens (and creates) the store before the workers race
        const perWorker = await raceIncrements(2, {
          options: workerOptions(),
          ns: ns('race'),
          key: 'hits',
          count: 50,
          ttlMs: 60_000,
        });
        expect(perWorker.map((values) => values.length)).toEqual([50, 50]);
        const all = perWorker.flat().sort((a, b) => a - b);
        expect(all).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
        expect(await kv.get('hits')).toBe('100');
      });

      it('counts exactly: 100 concurrent increments through two backend instances of one thread', async () => {
        const a = (await open()).namespace(ns());
        const b = (await open()).namespace(ns());
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).increment('hits', 1, 60_000)),
        );
        expect(results.map((r) => r.value).sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
        expect(await a.get('hits')).toBe('100');
      });
    });

    describe('namespaces', () => {
      it('keeps every (namespace, key) pair apart, whatever the strings hold', async () => {
        const backend = await open();
        const x = ns('x');
        // Pairs that collide under naive spellings: `ns:key`, `ns/key`, `ns\0key`, a path join,
        // `<len>:ns:key` without care, another namespace's encoded prefix as a key, Unicode forms.
        const pairs: Array<[string, string]> = [
          ['a', 'b:c'],
          ['a:b', 'c'],
          ['a', 'b/c'],
          ['a/b', 'c'],
          ['a', '../b/c'],
          ['b', 'c'],
          ['a/..', 'b/c'],
          ['a/../b', 'c'],
          ['a', '..'],
          ['a/..', ''],
          ['a', '\0b'],
          ['a\0', 'b'],
          ['a', 'b\0'],
          ['a\0b', ''],
          ['a', ''],
          ['', 'a'],
          ['', ''],
          ['a', 'a'],
          ['', ':a'],
          [':', 'a'],
          ['x:1:y', 'k'],
          ['x', '1:y:k'],
          ['1:a', 'b'],
          ['1', 'a:b'],
          ['a', '1:a:b'],
          [x, 'k'],
          ['', `${Buffer.byteLength(x)}:${x}:k`],
          ['y', `${Buffer.byteLength(x)}:${x}:k`],
          ['y', `${x}:k`],
          ['y', `${x}/k`],
          ['é', 'k'],
          ['e\u0301', 'k'],
          ['a', 'é'],
          ['a', 'e\u0301'],
          ['a', '*'],
          ['a', '?'],
          ['a', '[a]'],
          ['a', '%'],
          ['a', '_'],
        ];
        const spaced = pairs.map(([n, k]) => [n === x ? n : ns(n), k] as const);
        for (const [i, [n, k]] of spaced.entries()) await backend.namespace(n).set(k, `value ${i}`);
        for (const [i, [n, k]] of spaced.entries())
          expect(await backend.namespace(n).get(k), `ns ${JSON.stringify(n)} key ${JSON.stringify(k)}`).toBe(
            `value ${i}`,
          );
        for (const [n, k] of spaced) await backend.namespace(n).delete(k);
        for (const [n, k] of spaced) expect(await backend.namespace(n).get(k)).toBeNull();
      });

      it('keeps counters and deletes in their namespace', async () => {
        const backend = await open();
        const a = backend.namespace(ns('a'));
        const b = backend.namespace(ns('b'));
        await a.increment('k', 1, 60_000);
        await a.increment('k', 1, 60_000);
        expect((await b.increment('k', 1, 60_000)).value).toBe(1);
        await b.delete('k');
        expect(await a.get('k')).toBe('2');
        await b.set('k', 'b');
        expect((await a.increment('k', 1, 60_000)).value).toBe(3);
        expect(await b.get('k')).toBe('b');
      });

      it('refuses a namespace that is too long or not well-formed Unicode', async () => {
        const backend = await open();
        expect(() => backend.namespace('n'.repeat(1025))).toThrow(/namespace is 1025 bytes/);
        expect(() => backend.namespace('a\uD800')).toThrow(/well-formed Unicode/);
        expect(() => backend.namespace('n'.repeat(1024))).not.toThrow();
      });
    });

    describe('quota per namespace', () => {
      const quotaOf = async (maxBytes: number, suffix?: string): Promise<KvStore> =>
        (await open()).namespace(ns(suffix), { maxBytes });
      const refused = (bytes: number, limit: number) => ({
        code: 'ANVIL_ERR_QUOTA_KV_BYTES',
        status: 507,
        message: `this write would make the API's keys and values in the key-value store ${bytes} bytes, over its quota of ${limit} bytes (api.yaml limits.kvKb, at most --max-kv-bytes)`,
      });

      it('counts keys and values in UTF-8 bytes; a write past the quota is refused with 507 and changes nothing', async () => {
        const kv = await quotaOf(20);
        await kv.set('ab', '12345678');
        await kv.set('cd', 'éééé'); // 2 + 8: 20 in all, at the quota
        await expect(kv.set('e', 'x')).rejects.toMatchObject(refused(22, 20));
        expect(await kv.get('e')).toBeNull();
        expect(await kv.get('cd')).toBe('éééé');
      });

      it('an overwrite with less and a delete free room; a write that does not grow passes even above a lowered quota', async () => {
        const kv = await quotaOf(20);
        await kv.set('ab', '12345678');
        await kv.set('cd', '12345678');
        await kv.set('ab', '1'); // 3 + 10
        await kv.set('e', 'xxxxxx'); // + 7 = 20
        const lowered = await quotaOf(10);
        await lowered.set('e', 'x'); // 15: above 10, but smaller than before
        await expect(lowered.set('e', 'xx')).rejects.toMatchObject(refused(16, 10));
        await lowered.delete('cd'); // 5
        await lowered.set('f', 'xxxx'); // 10
        expect(await lowered.get('f')).toBe('xxxx');
      });

      it('a counter takes its key and its digits; an increment past the quota is refused and leaves the counter as it was', async () => {
        const kv = await quotaOf(6);
        expect((await kv.increment('c', 9, 60_000)).value).toBe(9); // 2
        expect((await kv.increment('c', 1, 60_000)).value).toBe(10); // 3
        await kv.set('k', 'x'); // 5
        await expect(kv.increment('d', 1, 60_000)).rejects.toMatchObject(refused(7, 6));
        expect(await kv.get('d')).toBeNull();
        expect((await kv.increment('c', 90, 60_000)).value).toBe(100); // 6
        await expect(kv.increment('c', 900, 60_000)).rejects.toMatchObject(refused(7, 6));
        expect(await kv.get('c')).toBe('100');
        expect((await kv.increment('c', -1, 60_000)).value).toBe(99);
      });

      it('expired keys stop counting', async () => {
        const kv = await quotaOf(10);
        await kv.set('a', '12345678', 150); // 9
        await expect(kv.set('b', 'xx')).rejects.toMatchObject({ code: 'ANVIL_ERR_QUOTA_KV_BYTES' });
        await expect(kv.increment('n', 1, 150)).rejects.toMatchObject({ code: 'ANVIL_ERR_QUOTA_KV_BYTES' });
        await elapse(150);
        await kv.set('b', 'xx');
        await kv.set('c', 'xxxxx');
        expect(await kv.get('b')).toBe('xx');
      });

      it('each namespace has its own count; writes through a view without quota count too', async () => {
        const full = await quotaOf(5, 'full');
        await full.set('k', 'xxxx');
        const other = await quotaOf(5, 'other');
        await other.set('k', 'xxxx');
        const unlimited = (await open()).namespace(ns('full'));
        await unlimited.set('m', 'xxxxxxxxx');
        await expect(full.set('n', '')).rejects.toMatchObject(refused(16, 5));
      });

      it('concurrent writes through two backends never pass the quota together', async () => {
        const [first, second] = [await quotaOf(50), await quotaOf(50)];
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? first : second).set(`k${String(i).padStart(2, '0')}`, 'xxxxxxx'),
          ),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
        for (const r of results)
          if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'ANVIL_ERR_QUOTA_KV_BYTES' });
      });

      it('refuses a bad quota', async () => {
        const backend = await open();
        for (const maxBytes of [0, 1.5, Number.NaN])
          expect(() => backend.namespace(ns(), { maxBytes })).toThrow(
            /the quota must be \{ maxBytes: an integer >= 1 \}/,
          );
      });
    });

    describe('limits', () => {
      it('takes keys up to 1 KiB of UTF-8 and rejects longer ones on every call', async () => {
        const kv = await store();
        for (const key of ['k'.repeat(1024), 'é'.repeat(512)]) {
          await kv.set(key, 'v');
          expect(await kv.get(key)).toBe('v');
          expect((await kv.increment(`${key.slice(1)}#`, 1, 1000)).value).toBe(1);
        }
        for (const key of ['k'.repeat(1025), `${'é'.repeat(512)}k`]) {
          const message = /key is 1025 bytes, the limit is 1024 bytes/;
          await expect(kv.set(key, 'v')).rejects.toThrow(message);
          await expect(kv.get(key)).rejects.toThrow(message);
          await expect(kv.delete(key)).rejects.toThrow(message);
          await expect(kv.increment(key, 1, 1000)).rejects.toMatchObject({ code: 'ANVIL_ERR_KV_KEY_TOO_LONG' });
        }
      });

      it('takes values up to 5 MiB of UTF-8 and rejects larger ones', async () => {
        const kv = await store();
        const largest = 'v'.repeat(5 * MiB);
        await kv.set('big', largest);
        expect((await kv.get('big'))?.length).toBe(5 * MiB);
        await expect(kv.set('bigger', `${largest}v`)).rejects.toThrow(
          /value is 5242881 bytes, the limit is 5242880 bytes/,
        );
        await expect(kv.set('wide', 'é'.repeat(2.5 * MiB + 1))).rejects.toMatchObject({
          code: 'ANVIL_ERR_KV_VALUE_TOO_LARGE',
        });
        expect(await kv.get('bigger')).toBeNull();
        await kv.delete('big');
      });

      it('rejects bad ttls, increments and strings with a clear message', async () => {
        const kv = await store();
        for (const ttl of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
          await expect(kv.set('k', 'v', ttl)).rejects.toThrow(/ttlMs must be a finite number of milliseconds > 0/);
          await expect(kv.increment('k', 1, ttl)).rejects.toThrow(/ttlMs must be/);
        }
        await expect(kv.increment('k', 1, undefined as unknown as number)).rejects.toThrow(/ttlMs must be/);
        for (const by of [1.5, Number.NaN, 2 ** 53, '1' as unknown as number]) {
          await expect(kv.increment('k', by, 1000)).rejects.toThrow(/"by" must be a safe integer/);
        }
        await expect(kv.set('k\uD800', 'v')).rejects.toThrow(/key is not well-formed Unicode/);
        await expect(kv.set('k', 'v\uDC00')).rejects.toThrow(/value is not well-formed Unicode/);
        await expect(kv.set('k', 42 as unknown as string)).rejects.toThrow(/value must be a string/);
        await expect(kv.get(null as unknown as string)).rejects.toThrow(/key must be a string/);
        expect(await kv.get('k')).toBeNull();
      });
    });
  });
}
