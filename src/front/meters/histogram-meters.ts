import type { Registry } from 'prom-client';
import { histogramSamples, type HistogramCounts } from './histogram-samples.js';

/** [observations, their values summed, observations per bucket (+Inf last)], as a thread reports them. */
export type ReportedHistogram = [count: number, sum: number, buckets: readonly number[]];

/**
 * A Prometheus histogram whose observations were counted elsewhere in plain arrays (an actor
 * thread's report): added per label set, turned into samples only when metrics are scraped.
 */
export class HistogramMeters {
  private readonly meters = new Map<string, HistogramCounts>();

  constructor(
    registry: Registry,
    readonly name: string,
    help: string,
    private readonly bounds: readonly number[],
  ) {
    const meters = this.meters;
    registry.registerMetric({
      name,
      get: async () => ({
        name,
        help,
        type: 'histogram',
        aggregator: 'sum',
        values: [...meters.values()].flatMap((m) => histogramSamples(name, bounds, m)),
      }),
      reset: () => meters.clear(),
    } as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  add(labels: Record<string, string>, [count, sum, buckets]: ReportedHistogram): void {
    const key = Object.values(labels).join('\0');
    let m = this.meters.get(key);
    if (m === undefined) {
      m = { labels, buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.meters.set(key, m);
    }
    for (let b = 0; b < m.buckets.length && b < buckets.length; b++) m.buckets[b]! += buckets[b]!;
    m.sum += sum;
    m.count += count;
  }
}
