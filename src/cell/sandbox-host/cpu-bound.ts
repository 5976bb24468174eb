import { threadCpuClock } from './thread-cpu-clock.js';

/**
 * A tighter charge for a long stretch of directive code, from the CPU time of the thread it ran on.
 *
 * isolated-vm charges an isolate the time it ran on the clock (its build files drop the Linux thread
 * CPU clock, and building it in would cost every call into the isolate two or more clock syscalls,
 * ~1 µs each here, measured), so a thread that waited for a core — a busy host, the low-priority
 * cell — is charged its wait. The CPU time of the calling thread since a moment before the stretch
 * began bounds what the stretch used: the isolate runs on this thread (calls are synchronous). It is
 * read only for a stretch charged more than REFINE_ABOVE_NS, from a mark taken as a stretch starts,
 * at most every MARK_EVERY_MS: at high call rates one read per few milliseconds, not one per call.
 *
 * The thread's own CPU time is the kernel's `/proc/thread-self/schedstat` (Node 20 has no per-thread
 * `cpuUsage`); where that cannot be read, the process's CPU time, which also bounds it, but counts
 * the other threads of the cell too (a busy neighbour API makes it loose).
 *
 * schedstat's figure for a thread that is running moves only at a scheduler tick or when the thread
 * is switched out (measured here: steps of 4 ms, CONFIG_HZ=250; reading it does not move it), so a
 * stretch may have used up to a tick more than it shows. The charge's bound adds TICK_SLACK_NS, a
 * tick at the lowest rate Linux is built with (100 Hz): without it, a 1–4 ms stretch between two
 * ticks was charged 0 (seen in a trace's `anvil.sandbox.cpu_us`). Whether a stretch stopped by its
 * timeout was starved asks the opposite question (did its thread run it at all?), so it gets the
 * figure without the slack (`ran`, read only on that rare path).
 */
const MARK_EVERY_MS = 5;
const TICK_SLACK_NS = 10_000_000n;
const REFINE_ABOVE_NS = 1_000_000n;

export class CpuBound {
  private markAt = Number.NEGATIVE_INFINITY;
  private markNs = 0n;
  private thread = threadCpuClock();

  /** As a stretch starts (`now`: performance.now()). */
  beforeStretch(now: number): void {
    if (now - this.markAt <= MARK_EVERY_MS) return;
    this.markAt = now;
    this.markNs = this.cpuNs();
  }

  /** What a stretch that has just ended, which isolated-vm charged `chargedNs`, is charged: that, or its thread's CPU since the mark plus a tick when that is less. */
  refine(chargedNs: bigint): bigint {
    if (chargedNs <= REFINE_ABOVE_NS) return chargedNs;
    return min(chargedNs, this.cpuNs() - this.markNs + TICK_SLACK_NS);
  }

  /** What its thread is seen to have run of such a stretch: `chargedNs`, or its thread's CPU since the mark when that is less (no slack). */
  ran(chargedNs: bigint): bigint {
    if (chargedNs <= REFINE_ABOVE_NS) return chargedNs;
    return min(chargedNs, this.cpuNs() - this.markNs);
  }

  /** Its sandbox is closed: the descriptor goes. */
  close(): void {
    this.thread?.close();
    this.thread = null;
  }

  /** The thread's CPU time, or the process's where the thread's cannot be read. */
  private cpuNs(): bigint {
    return this.thread !== null ? this.thread.read() : processCpuNs();
  }
}

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

function processCpuNs(): bigint {
  const used = process.cpuUsage();
  return BigInt(used.user + used.system) * 1000n;
}
