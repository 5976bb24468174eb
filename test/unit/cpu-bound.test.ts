import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { CpuBound } from '../../src/sandbox-host/cpu-bound.js';

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
  it('bounds a long charge by the calling thread\'s CPU, not by what other threads of the process used', async () => {
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
    bound.close();
    bound.close();
  });
});
