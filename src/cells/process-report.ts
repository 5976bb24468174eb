import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { CellProcessStats } from '../protocol/cell-messages.js';

const REPORT_EVERY_MS = 5_000;

/** Sends the cell process's CPU, memory and event-loop lag every few seconds (to the router's metrics). */
export function reportProcess(send: (stats: CellProcessStats) => void): void {
  const lag = monitorEventLoopDelay({ resolution: 20 });
  lag.enable();
  setInterval(() => {
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    send({
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      residentBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      eventLoopLagSeconds: lag.count > 0 ? lag.percentile(99) / 1e9 : 0,
    });
    lag.reset();
  }, REPORT_EVERY_MS).unref();
}
