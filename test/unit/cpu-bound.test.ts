import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { CpuBound } from '../../src/cell/sandbox-host/cpu-bound.js';

// A stretch isolated-vm charged on the clock is charged no more than the CPU its own thread used:
// another thread of the same process (a busy neighbour API in the same cell) does not count.
const SPIN = `const until = Date.now() + 300; while (Date.now() < until) {}`;

/** This thread's CPU time in ms (Linux), else the process's. */
function threadCpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

describe('CpuBound', () => {
  it("bounds a long charge by the calling thread's CPU, not by what other threads of the process used", async () => {
    const bound = new CpuBound();
    bound.beforeStretch(performance.now());
    const spinner = new Worker(SPIN, { eval: true });
    const exited = new Promise((resolve) => spinner.once('exit', resolve));
    // This thread only sleeps while the other one spins (as a starved thread waits for a core).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    await exited;
    const chargedNs = 300_000_000n;
    const refined = bound.refine(chargedNs);
    bound.close();
    // Charged this thread's CPU (near none) and a scheduler tick's slack (10 ms), not the 300 ms.
    expect(Number(refined) / 1e6).toBeLessThan(60);
  });

  it('keeps a charge the thread did use, and small charges as they are', () => {
    const bound = new CpuBound();
    bound.beforeStretch(performance.now());
    // 100 ms of this thread's own CPU, not of the clock: on a loaded machine 100 ms of spinning by
    // the clock is less CPU than that (seen: 39 ms while npm compiled on both cores).
    const start = threadCpuMs();
    while (threadCpuMs() - start < 100);
    expect(Number(bound.refine(100_000_000n)) / 1e6).toBeGreaterThan(50);
    expect(bound.refine(500_000n)).toBe(500_000n);
    expect(bound.ran(500_000n)).toBe(500_000n);
    bound.close();
    bound.close();
  });

  it('keeps the charge of a short stretch that ran between two scheduler ticks', () => {
    // A running thread's schedstat moves only at a tick (every 4 ms here): a 3 ms stretch often
    // shows no CPU at all. Twenty of them, each charged what it spun on the clock, keep their charge,
    // or (when this thread was switched out meanwhile, on a loaded machine) at least a tick's 10 ms.
    const bound = new CpuBound();
    const charges: Array<[charged: bigint, refined: bigint]> = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      bound.beforeStretch(started);
      while (performance.now() - started < 3);
      const chargedNs = BigInt(Math.round((performance.now() - started) * 1e6));
      charges.push([chargedNs, bound.refine(chargedNs)]);
      // The next stretch takes a fresh mark (one per MARK_EVERY_MS at most).
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 6);
    }
    bound.close();
    expect(charges.filter(([charged, refined]) => refined < (charged < 10_000_000n ? charged : 10_000_000n))).toEqual(
      [],
    );
  });
});
