import { describe, expect, it } from 'vitest';
import { BUSY_SHARE, BUSY_WINDOW_MS, BusyMeter } from '../../src/actors/busy-meter.js';

/** A thread CPU clock the test moves by hand (ms of CPU). */
function fakeClock() {
  let ns = 0n;
  return { clock: { read: () => ns, close: () => {} }, use: (ms: number) => (ns += BigInt(Math.round(ms * 1e6))) };
}

const W = BUSY_WINDOW_MS;

describe('BusyMeter', () => {
  it(`says busy when the thread used ${BUSY_SHARE * 100} % of a core or more over a ${W} ms window`, () => {
    const { clock, use } = fakeClock();
    let busy = 0;
    const meter = new BusyMeter(() => busy++, clock, 0);
    use(W * BUSY_SHARE);
    meter.check(W);
    expect(busy).toBe(1);
    use(W);
    meter.check(2 * W);
    expect(busy).toBe(2);
  });

  it('stays quiet below that share, however many requests arrive', () => {
    const { clock, use } = fakeClock();
    let busy = 0;
    const meter = new BusyMeter(() => busy++, clock, 0);
    // A request every millisecond, each using a little less of it than the share.
    for (let t = 1; t <= 10 * W; t++) {
      use(BUSY_SHARE - 0.05);
      meter.check(t);
    }
    expect(busy).toBe(0);
  });

  it('reads the clock at most once per window, and counts an idle spell before work in its window', () => {
    const { clock, use } = fakeClock();
    let reads = 0;
    let busy = 0;
    const counting = { read: () => (reads++, clock.read()), close: () => {} };
    const meter = new BusyMeter(() => busy++, counting, 0);
    reads = 0;
    for (let t = 0; t < W; t += 5) meter.check(t);
    expect(reads).toBe(0);
    // Idle for ten seconds, then a whole core for a window: the first window read is the idle one.
    use(10);
    meter.check(10_000);
    expect({ reads, busy }).toEqual({ reads: 1, busy: 0 });
    use(W);
    meter.check(10_000 + W);
    expect({ reads, busy }).toEqual({ reads: 2, busy: 1 });
  });
});
