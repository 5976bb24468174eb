import type { Registry } from 'prom-client';
import { SANDBOX_CPU_BUCKETS } from '../metrics/buckets.js';
import type { SandboxCpuCount } from '../protocol/stats.js';
import { histogramSamples, type HistogramCounts } from './histogram-samples.js';

export const SANDBOX_CPU_METRIC = 'anvil_sandbox_cpu_seconds';

/**
 * `anvil_sandbox_cpu_seconds{host,api,directive}`: the CPU time of each custom directive call, as
 * the API's threads measured it on their isolates and reported it (every 2 s).
 */
export class SandboxCpuMeters {
  private readonly meters = new Map<string, HistogramCounts>();

  constructor(registry: Registry) {
    const meters = this.meters;
    registry.registerMetric({
      name: SANDBOX_CPU_METRIC,
      get: async () => ({
        name: SANDBOX_CPU_METRIC,
        help: 'CPU time of each custom directive call, in its isolate (module loading included on a first call)',
        type: 'histogram',
        aggregator: 'sum',
        values: [...meters.values()].flatMap((m) => histogramSamples(SANDBOX_CPU_METRIC, SANDBOX_CPU_BUCKETS, m)),
      }),
      reset: () => meters.clear(),
    } as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  add(host: string, api: string, counts: readonly SandboxCpuCount[]): void {
    for (const [directive, count, sum, buckets] of counts) {
      const key = `${host}\0${api}\0${directive}`;
      let m = this.meters.get(key);
      if (m === undefined) {
        m = { labels: { host, api, directive }, buckets: new Array<number>(SANDBOX_CPU_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
        this.meters.set(key, m);
      }
      for (let b = 0; b < m.buckets.length && b < buckets.length; b++) m.buckets[b]! += buckets[b]!;
      m.sum += sum;
      m.count += count;
    }
  }
}
