import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { countAt, type LimitWindow } from '../../src/directives/counters/limit-counters.js';
import { DAY_MS, MINUTE_MS, spanWindow } from '../../src/directives/counters/windows.js';
import type { KvBackend, KvStore } from '../../src/engine/kv-store.js';

/** The clock the counters read (and, for the embedded store, the store's own): moved by the tests. */
export interface TestClock {
  now: number;
}

const MINUTE_LIMIT = 3;
const HOUR_MS = 60 * MINUTE_MS;
/** 10 s before the end of a minute, some day in 2026 (UTC). */
const START = Date.UTC(2026, 10, 25, 12, 0, 50);

/**
 * The rate-limit windows across clock steps, on a store (the embedded and the Redis test files both
 * call it), with an injected clock, never the machine's. `makeBackend` opens a backend whose own
 * clock (if it has one the tests can set: the embedded store) is `clock.now`; Redis keeps its own
 * clock, which only forgets keys. Policy (docs/operate.md, "Reliability"): a step forward starts a fresh
 * window; a step back never grants a request the current window already refused.
 */
export function windowCounterContract(name: string, makeBackend: (clock: TestClock) => Promise<KvBackend>): void {
  describe(`rate-limit windows across clock steps: ${name}`, () => {
    const opened: KvBackend[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((backend) => backend.close()));
    });

    const setup = async () => {
      const clock: TestClock = { now: START };
      const backend = await makeBackend(clock);
      opened.push(backend);
      const kv = backend.namespace(`clock-${randomUUID().slice(0, 8)}/api`);
      return { clock, kv, limiter: limiterOn(kv, clock) };
    };

    it('a step forward past the window starts a fresh one', async () => {
      const { clock, limiter } = await setup();
      for (let i = 1; i <= MINUTE_LIMIT + 1; i++) expect(await limiter.minute()).toMatchObject({ used: i });
      clock.now += 2 * MINUTE_MS;
      const fresh = await limiter.minute();
      expect(fresh).toMatchObject({ used: 1 });
      expect(fresh.msLeft).toBeLessThanOrEqual(MINUTE_MS);
    });

    it('a step forward inside the window keeps counting in it', async () => {
      const { clock, limiter } = await setup();
      await limiter.minute();
      clock.now += 5_000;
      expect(await limiter.minute()).toMatchObject({ used: 2, msLeft: 5_000 });
    });

    it('a step back inside the window keeps its count', async () => {
      const { clock, limiter } = await setup();
      for (let i = 0; i < MINUTE_LIMIT; i++) await limiter.minute();
      clock.now -= 40_000;
      expect(await limiter.minute()).toMatchObject({ used: MINUTE_LIMIT + 1 });
    });

    it('a step back across the window start grants nothing: the request counts in the window it left', async () => {
      const { clock, limiter } = await setup();
      clock.now += 20_000; // 10 s into the next minute
      for (let i = 0; i < MINUTE_LIMIT; i++) await limiter.minute();
      clock.now -= 30_000; // back into the minute before, which counted nothing
      const after = await limiter.minute();
      expect(after.used).toBe(MINUTE_LIMIT + 1);
      // Its window is still the later one: it ends 60 s after the minute the clock is in.
      expect(after.msLeft).toBe(80_000);
      // When the clock reaches that minute again, it is the same window.
      clock.now += 30_000;
      expect(await limiter.minute()).toMatchObject({ used: MINUTE_LIMIT + 2, msLeft: 50_000 });
    });

    it('a step back by an hour keeps the count, in a window that ends when the clock says', async () => {
      const { clock, limiter } = await setup();
      for (let i = 0; i < MINUTE_LIMIT; i++) await limiter.minute();
      clock.now -= HOUR_MS;
      const after = await limiter.minute();
      expect(after).toMatchObject({ used: MINUTE_LIMIT + 1, msLeft: 10_000 });
      // Not an hour of refusals: the clock's next minute starts fresh.
      clock.now += 10_000;
      expect(await limiter.minute()).toMatchObject({ used: 1 });
    });

    it('a day window across midnight, stepped back an hour: the count stays', async () => {
      const { clock, limiter } = await setup();
      clock.now = Date.UTC(2026, 10, 26, 0, 10);
      for (let i = 1; i <= 3; i++) expect(await limiter.day()).toMatchObject({ used: i });
      clock.now -= HOUR_MS; // 23:10 the day before
      const after = await limiter.day();
      expect(after.used).toBe(4);
      expect(after.msLeft).toBe(DAY_MS + 50 * MINUTE_MS);
    });

    it('two instances a second apart at a minute boundary share one window', async () => {
      const { clock, kv, limiter: ahead } = await setup();
      const behindClock: TestClock = { now: 0 };
      const behind = limiterOn(kv, behindClock);
      clock.now = Date.UTC(2026, 10, 25, 12, 1, 0, 200);
      behindClock.now = clock.now - 1_000;
      expect(await ahead.minute()).toMatchObject({ used: 1 });
      expect(await behind.minute()).toMatchObject({ used: 2 });
      expect(await ahead.minute()).toMatchObject({ used: 3 });
    });

    it('reading without counting sees what counting sees, across a step back', async () => {
      const { clock, limiter } = await setup();
      clock.now += 20_000;
      for (let i = 0; i < MINUTE_LIMIT; i++) await limiter.minute();
      clock.now -= 30_000;
      expect(await limiter.minute(false)).toMatchObject({ used: MINUTE_LIMIT, msLeft: 80_000 });
      clock.now += 2 * MINUTE_MS;
      expect(await limiter.minute(false)).toMatchObject({ used: 0 });
    });

    it('counts exactly under concurrency, over several connections', async () => {
      const { clock } = await setup();
      const name = `clock-${randomUUID().slice(0, 8)}/api`;
      const backends = await Promise.all([makeBackend(clock), makeBackend(clock)]);
      opened.push(...backends);
      const limiters = backends.map((backend) => limiterOn(backend.namespace(name), clock));
      const used = await Promise.all(Array.from({ length: 60 }, (_, i) => limiters[i % 2]!.minute()));
      expect(used.map((count) => count.used).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 60 }, (_, i) => i + 1),
      );
    });

    it('refuses a key that holds another kind of value, and leaves it as it was', async () => {
      const { kv } = await setup();
      await kv.set('ratelimit:x:minute', 'hello');
      await expect(
        kv.countInWindow('ratelimit:x:minute', 1, { endsAt: START + 10_000, spanMs: MINUTE_MS }, MINUTE_MS),
      ).rejects.toMatchObject({
        code: 'ANVIL_ERR_KV_FAILED',
        message: expect.stringMatching(/not a window counter/),
      });
      expect(await kv.get('ratelimit:x:minute')).toBe('hello');
    });

    it("counts against the API's key-value quota: refused and nothing stored when it does not fit", async () => {
      const { clock } = await setup();
      const backend = await makeBackend(clock);
      opened.push(backend);
      const name = `clock-${randomUUID().slice(0, 8)}/api`;
      const tight = backend.namespace(name, { maxBytes: 30 });
      await expect(limiterOn(tight, clock).minute()).rejects.toMatchObject({ code: 'ANVIL_ERR_QUOTA_KV_BYTES' });
      expect(await tight.get('ratelimit:test:minute')).toBeNull();
      const roomy = backend.namespace(name, { maxBytes: 100 });
      expect(await limiterOn(roomy, clock).minute()).toMatchObject({ used: 1 });
    });

    it('stores the count and the window end as <count>@<end>', async () => {
      const { kv } = await setup();
      await kv.countInWindow('c', 1, { endsAt: START + 10_000, spanMs: MINUTE_MS }, 70_000);
      expect(await kv.get('c')).toBe(`1@${START + 10_000}`);
    });
  });
}

/** RateLimit's two windows (a minute of MINUTE_LIMIT, a day of 3) on a store, at the clock's time. */
function limiterOn(kv: KvStore, clock: TestClock) {
  const window = (name: string, spanMs: number, max: number): LimitWindow => ({
    name,
    max,
    key: `ratelimit:test:${name}`,
    ...spanWindow(spanMs, clock.now),
  });
  const one = async (made: LimitWindow, count: boolean) => (await countAt(kv, [made], count, clock.now))[0]!;
  return {
    minute: (count = true) => one(window('minute', MINUTE_MS, MINUTE_LIMIT), count),
    day: (count = true) => one(window('day', DAY_MS, 3), count),
  };
}
