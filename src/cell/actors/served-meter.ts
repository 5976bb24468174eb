import { LATENCY_BUCKETS, latencyBucket } from '../../shared/metrics/buckets.js';
import type { ServedCount } from '../../shared/protocol/stats.js';

/**
 * Counts the requests a thread took straight from its peers, by route and status, with their
 * latency: the router never saw them, so the thread reports them (in its stats frame) for
 * /anvil/metrics.
 */
export class ServedMeter {
  private counts = new Map<string, ServedCount>();

  observe(route: string, status: number, seconds: number): void {
    const key = `${status} ${route}`;
    let entry = this.counts.get(key);
    if (entry === undefined) {
      entry = [route, status, 0, 0, new Array<number>(LATENCY_BUCKETS.length + 1).fill(0)];
      this.counts.set(key, entry);
    }
    entry[2]++;
    entry[3] += seconds;
    entry[4][latencyBucket(seconds)]!++;
  }

  /** What was counted since the last call (undefined: nothing). */
  take(): ServedCount[] | undefined {
    if (this.counts.size === 0) return undefined;
    const taken = [...this.counts.values()];
    this.counts = new Map();
    return taken;
  }
}
