import { performance } from 'node:perf_hooks';
import { threadCpuClock, type ThreadCpuClock } from '../sandbox-host/thread-cpu-clock.js';

/** The window the thread's CPU share is taken over (long beside schedstat's 4 ms steps). */
export const BUSY_WINDOW_MS = 100;
/**
 * The share of one core from which the thread is busy: its API gets another thread. Not lower: at
 * 0.8 over 50 ms a saturated ReadUser endpoint (one thread at ~75 % of a core, on average) started
 * its second thread by chance, for 2–6 µs more cell CPU per request and no more throughput.
 */
export const BUSY_SHARE = 0.9;

/**
 * Tells the router when this actor thread keeps a core busy, so that its API gets another thread
 * (router/actor-handle.ts): the CPU time the thread itself used over the last BUSY_WINDOW_MS, not how
 * many requests wait for it. A thread the router keeps fed with quick requests has many in flight
 * while using half a core, and a second thread then only costs more per request (smaller batches,
 * more wake-ups: measured in bench/notes/custom-directive-profile.md). CPU time, not the event
 * loop's utilization: a thread that waits for a core on a busy host is not busy itself.
 *
 * Read as work arrives (`check`, once per request), at most once per window: an idle thread reads
 * nothing. Off Linux, where there is no per-thread CPU clock, the event loop's utilization stands
 * in for it.
 */
export class BusyMeter {
  private windowStart: number;
  private cpuAtStart: bigint;
  private loopAtStart = performance.eventLoopUtilization();

  constructor(
    private readonly onBusy: () => void,
    /** This thread's CPU clock (made on the thread it measures); null: none, the loop's utilization instead. */
    private readonly clock: ThreadCpuClock | null = threadCpuClock(),
    now = performance.now(),
  ) {
    this.windowStart = now;
    this.cpuAtStart = clock?.read() ?? 0n;
  }

  check(now = performance.now()): void {
    const elapsed = now - this.windowStart;
    if (elapsed < BUSY_WINDOW_MS) return;
    let share: number;
    if (this.clock !== null) {
      const cpu = this.clock.read();
      share = Number(cpu - this.cpuAtStart) / 1e6 / elapsed;
      this.cpuAtStart = cpu;
    } else {
      const loop = performance.eventLoopUtilization();
      share = performance.eventLoopUtilization(loop, this.loopAtStart).utilization;
      this.loopAtStart = loop;
    }
    this.windowStart = now;
    if (share >= BUSY_SHARE) this.onBusy();
  }

  close(): void {
    this.clock?.close();
  }
}
