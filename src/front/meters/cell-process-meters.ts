import type { Registry } from 'prom-client';
import type { CellProcessStats } from '../../shared/protocol/cell-messages.js';

/** A cell that has not reported for this long is gone (died, retired): its figures are dropped. */
const STALE_MS = 15_000;

const GAUGES: Array<{ name: string; help: string; type: 'gauge' | 'counter'; pick: (s: CellProcessStats) => number }> =
  [
    {
      name: 'anvil_cell_cpu_seconds_total',
      help: 'CPU (user + system) a cell process used since it started, its actor threads included',
      type: 'counter',
      pick: (s) => s.cpuSeconds,
    },
    {
      name: 'anvil_cell_resident_memory_bytes',
      help: 'Resident memory of a cell process',
      type: 'gauge',
      pick: (s) => s.residentBytes,
    },
    {
      name: 'anvil_cell_heap_used_bytes',
      help: "V8 heap used by a cell process's main thread",
      type: 'gauge',
      pick: (s) => s.heapUsedBytes,
    },
    {
      name: 'anvil_cell_event_loop_lag_seconds',
      help: "99th percentile of a cell process's event-loop delay over its last 5 s report",
      type: 'gauge',
      pick: (s) => s.eventLoopLagSeconds,
    },
  ];

/** `anvil_cell_*{cell}`: what each cell process reports of itself every 5 s (the router's own are prom-client's defaults). */
export class CellProcessMeters {
  private readonly latest = new Map<number, { at: number; stats: CellProcessStats }>();

  constructor(registry: Registry) {
    for (const gauge of GAUGES) {
      registry.registerMetric({
        name: gauge.name,
        get: async () => ({
          name: gauge.name,
          help: gauge.help,
          type: gauge.type,
          aggregator: 'sum',
          values: this.fresh().map(([cell, stats]) => ({ labels: { cell: String(cell) }, value: gauge.pick(stats) })),
        }),
        reset: () => this.latest.clear(),
      } as unknown as Parameters<Registry['registerMetric']>[0]);
    }
  }

  report(cell: number, stats: CellProcessStats): void {
    this.latest.set(cell, { at: Date.now(), stats });
  }

  private fresh(): Array<[number, CellProcessStats]> {
    const now = Date.now();
    for (const [cell, { at }] of this.latest) if (now - at > STALE_MS) this.latest.delete(cell);
    return [...this.latest].map(([cell, { stats }]) => [cell, stats]);
  }
}
