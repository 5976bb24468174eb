import { describe, expect, it } from 'vitest';
import {
  BUSY_SHARE,
  BUSY_WINDOW_MS,
  CpuShares,
  LONG_STRETCH_MS,
  REPEAT_WITHIN_MS,
} from '../../src/cell/actors/cpu-shares.js';
import { BusyReason, busyReasonText } from '../../src/shared/protocol/busy-reasons.js';

/** A thread CPU clock the test moves by hand (ms of CPU). */
function fakeClock() {
  let ns = 0n;
  return { clock: { read: () => ns, close: () => {} }, use: (ms: number) => (ns += BigInt(Math.round(ms * 1e6))) };
}

function actor() {
  const a = {
    busy: 0,
    reasons: [] as BusyReason[],
    sayBusy: (reason: BusyReason) => void (a.busy++, a.reasons.push(reason)),
  };
  return a;
}

const W = BUSY_WINDOW_MS;

describe('CpuShares', () => {
  it(`says busy when its one actor's thread used ${BUSY_SHARE * 100} % of a core or more over a ${W} ms window`, () => {
    const { clock, use } = fakeClock();
    const only = actor();
    const shares = new CpuShares(false, clock, 0);
    shares.join(only, 0);
    use(W * BUSY_SHARE);
    shares.check(W);
    expect(only.busy).toBe(1);
    use(W);
    shares.check(2 * W);
    expect(only.busy).toBe(2);
    expect(only.reasons.map(busyReasonText)).toEqual(['its own thread busy', 'its own thread busy']);
  });

  it('stays quiet below that share, however many requests arrive', () => {
    const { clock, use } = fakeClock();
    const only = actor();
    const shares = new CpuShares(false, clock, 0);
    shares.join(only, 0);
    // A request every millisecond, each using a little less of it than the share.
    for (let t = 1; t <= 10 * W; t++) {
      use(BUSY_SHARE - 0.05);
      shares.check(t);
    }
    expect(only.busy).toBe(0);
  });

  it('reads the clock at most once per window, and counts an idle spell before work in its window', () => {
    const { clock, use } = fakeClock();
    let reads = 0;
    const only = actor();
    const counting = { read: () => (reads++, clock.read()), close: () => {} };
    const shares = new CpuShares(false, counting, 0);
    shares.join(only, 0);
    reads = 0;
    for (let t = 0; t < W; t += 5) shares.check(t);
    expect(reads).toBe(0);
    // Idle for ten seconds, then a whole core for a window: the first window read is the idle one.
    use(10);
    shares.check(10_000);
    expect({ reads, busy: only.busy }).toEqual({ reads: 1, busy: 0 });
    use(W);
    shares.check(10_000 + W);
    expect({ reads, busy: only.busy }).toEqual({ reads: 2, busy: 1 });
  });

  it('on a busy shared thread, blames the actor that ran most of its code, and no one when many share it evenly', () => {
    const { clock, use } = fakeClock();
    const even = Array.from({ length: 10 }, actor);
    const shares = new CpuShares(true, clock, 0);
    for (const a of even) shares.join(a, 0);
    for (const a of even) shares.ran(a, W / 10);
    use(W);
    shares.check(W);
    expect(even.map((a) => a.busy)).toEqual(even.map(() => 0));

    // Twice in a row the first one runs most of the code: it is the one making the thread busy.
    for (const round of [2, 3]) {
      for (const a of even.slice(1)) shares.ran(a, 1);
      shares.ran(even[0]!, W - 9);
      use(W);
      shares.check(round * W);
    }
    expect(even.map((a) => a.busy)).toEqual([1, ...even.slice(1).map(() => 0)]);
    expect(even[0]!.reasons).toEqual([BusyReason.Dominant]);
  });

  it('on a busy shared thread, does not blame an actor whose own code ran only a little of the window', () => {
    const { clock, use } = fakeClock();
    const [quiet, other] = [actor(), actor()];
    const shares = new CpuShares(true, clock, 0);
    shares.join(quiet, 0);
    shares.join(other, 0);
    // The thread is busy with untimed work; quiet's one call of 2 ms is most of the timed code.
    for (const round of [1, 2, 3]) {
      shares.ran(quiet, 2);
      shares.ran(other, 0.5);
      use(W);
      shares.check(round * W);
    }
    expect([quiet.busy, other.busy]).toEqual([0, 0]);
  });

  it('shares out the thread CPU in proportion to the timed stretches', () => {
    const { clock, use } = fakeClock();
    const [a, b] = [actor(), actor()];
    const shares = new CpuShares(true, clock, 0);
    shares.join(a, 0);
    shares.join(b, 0);
    // 300 ms timed for a, 100 ms for b; the thread used 800 ms of CPU (the untimed work shared out too).
    shares.ran(a, 300);
    shares.ran(b, 100);
    use(800);
    expect(shares.take(a, 1_000)).toEqual({ cpuMs: 600, windowMs: 1_000 });
    expect(shares.take(b, 1_000)).toEqual({ cpuMs: 200, windowMs: 1_000 });
  });

  it(`on a shared thread, two stretches of ${LONG_STRETCH_MS} ms of CPU within ${REPEAT_WITHIN_MS} ms make an actor busy`, () => {
    const { clock, use } = fakeClock();
    const [a, b] = [actor(), actor()];
    const shares = new CpuShares(true, clock, 0);
    shares.join(a, 0);
    shares.join(b, 0);
    use(LONG_STRETCH_MS * 3);
    shares.ran(a, LONG_STRETCH_MS * 3, 0, LONG_STRETCH_MS * 3); // the first request: its isolate, its directives compiled
    shares.check(W);
    expect(a.busy).toBe(0);
    // A long stretch while the OS ran something else (the thread used little CPU): not its doing.
    use(2);
    shares.ran(a, LONG_STRETCH_MS, 0, W + LONG_STRETCH_MS);
    shares.check(2 * W);
    expect(a.busy).toBe(0);
    use(LONG_STRETCH_MS + 1);
    shares.ran(b, 1, 0, 2 * W + 1);
    shares.ran(a, LONG_STRETCH_MS, 0, 2 * W + LONG_STRETCH_MS + 1);
    shares.check(3 * W);
    expect([a.busy, b.busy]).toEqual([1, 0]);
    expect(a.reasons).toEqual([BusyReason.LongStretch]);
    // Long again, but the last time was long ago: once is not enough.
    use(LONG_STRETCH_MS);
    shares.ran(a, LONG_STRETCH_MS, 0, 3 * W + LONG_STRETCH_MS);
    shares.check(3 * W + REPEAT_WITHIN_MS + 1);
    expect(a.busy).toBe(1);
  });

  it('on a saturated shared thread, does not count a stretch as long for the time the thread was off its core', () => {
    const { clock, use } = fakeClock();
    const [quick, busier] = [actor(), actor()];
    const shares = new CpuShares(true, clock, 0);
    shares.join(quick, 0);
    shares.join(busier, 0);
    for (const round of [0, 1]) {
      const start = round * W;
      // The thread runs 70 ms of a window of 100; quick's one stretch takes 25 ms by the wall clock
      // while the OS runs another thread for 30: at most 25 − 30 of it can be its own CPU.
      use(70);
      for (let i = 1; i <= 9; i++) shares.ran(busier, 5, 0, start + 5 * i);
      shares.ran(quick, LONG_STRETCH_MS + 5, 0, start + W);
      shares.check(start + W);
    }
    expect([quick.busy, busier.busy]).toEqual([0, 0]);
  });
});
