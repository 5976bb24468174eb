import { bucketOf, SANDBOX_CPU_BUCKETS } from '../../shared/metrics/buckets.js';
import type { SandboxCpuCount } from '../../shared/protocol/stats.js';

/**
 * CPU time per custom directive call, by directive, as a histogram the thread hands to the router
 * in its stats (anvil_sandbox_cpu_seconds). Counting a call is a few additions.
 */
export class CpuMeter {
  private counts = new Map<string, SandboxCpuCount>();

  observe(directive: string, seconds: number): void {
    let entry = this.counts.get(directive);
    if (entry === undefined) {
      entry = [directive, 0, 0, new Array<number>(SANDBOX_CPU_BUCKETS.length + 1).fill(0)];
      this.counts.set(directive, entry);
    }
    entry[1]++;
    entry[2] += seconds;
    entry[3][bucketOf(SANDBOX_CPU_BUCKETS, seconds)]!++;
  }

  /** What was counted since the last call (undefined: nothing). */
  take(): SandboxCpuCount[] | undefined {
    if (this.counts.size === 0) return undefined;
    const taken = [...this.counts.values()];
    this.counts = new Map();
    return taken;
  }
}
