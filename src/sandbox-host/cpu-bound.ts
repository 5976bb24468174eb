/**
 * A tighter charge for a long stretch of directive code, from the process's CPU time.
 *
 * isolated-vm charges an isolate the time it ran on the clock (its build files drop the Linux thread
 * CPU clock, and building it in would cost every call into the isolate two or more clock syscalls,
 * ~1 µs each here, measured), so a thread that waited for a core — a busy host, the low-priority
 * cell — is charged its wait. The process's CPU time since a moment before the stretch began bounds
 * what the stretch used (all of the process's threads together used that much). It is read only for
 * a stretch charged more than REFINE_ABOVE_NS, from a mark taken as a stretch starts, at most every
 * MARK_EVERY_MS: at high call rates one `getrusage` per few milliseconds, not one per call.
 */
const MARK_EVERY_MS = 5;
const REFINE_ABOVE_NS = 1_000_000n;

export class CpuBound {
  private markAt = Number.NEGATIVE_INFINITY;
  private markNs = 0n;

  /** As a stretch starts (`now`: performance.now()). */
  beforeStretch(now: number): void {
    if (now - this.markAt <= MARK_EVERY_MS) return;
    this.markAt = now;
    this.markNs = processCpuNs();
  }

  /** What a stretch that has just ended may be charged: `chargedNs`, or the process's CPU since the mark when that is less. */
  refine(chargedNs: bigint): bigint {
    if (chargedNs <= REFINE_ABOVE_NS) return chargedNs;
    const bound = processCpuNs() - this.markNs;
    return bound < chargedNs ? bound : chargedNs;
  }
}

function processCpuNs(): bigint {
  const used = process.cpuUsage();
  return BigInt(used.user + used.system) * 1000n;
}
