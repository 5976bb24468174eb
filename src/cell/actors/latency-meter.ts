import { LATENCY_BUCKETS, latencyBucket } from '../../shared/metrics/buckets.js';

/**
 * Counts durations (seconds) into the latency histogram's buckets between two stats reports of a
 * thread: what `take` returns is a ThreadStats `outgoing` entry.
 */
export class LatencyMeter {
  private count = 0;
  private sum = 0;
  private buckets = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);

  observe(seconds: number): void {
    this.count++;
    this.sum += seconds;
    this.buckets[latencyBucket(seconds)]!++;
  }

  /** [count, sum, buckets] since the last take, or undefined when nothing was observed. */
  take(): [number, number, number[]] | undefined {
    if (this.count === 0) return undefined;
    const taken: [number, number, number[]] = [this.count, this.sum, this.buckets];
    this.count = 0;
    this.sum = 0;
    this.buckets = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);
    return taken;
  }
}
