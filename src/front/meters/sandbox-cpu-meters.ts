import type { Registry } from 'prom-client';
import { SANDBOX_CPU_BUCKETS } from '../../shared/metrics/buckets.js';
import type { SandboxCpuCount } from '../../shared/protocol/stats.js';
import { HistogramMeters } from './histogram-meters.js';

export const SANDBOX_CPU_METRIC = 'anvil_sandbox_cpu_seconds';

/**
 * `anvil_sandbox_cpu_seconds{host,api,directive}`: the CPU time of each custom directive call, as
 * the API's threads measured it on their isolates and reported it (every 2 s).
 */
export class SandboxCpuMeters {
  private readonly histograms: HistogramMeters;

  constructor(registry: Registry) {
    this.histograms = new HistogramMeters(
      registry,
      SANDBOX_CPU_METRIC,
      'CPU time of each custom directive call, in its isolate (module loading included on a first call)',
      SANDBOX_CPU_BUCKETS,
    );
  }

  add(host: string, api: string, counts: readonly SandboxCpuCount[]): void {
    for (const [directive, count, sum, buckets] of counts)
      this.histograms.add({ host, api, directive }, [count, sum, buckets]);
  }
}
