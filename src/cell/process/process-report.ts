import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { CellProcessStats } from '../../shared/protocol/cell-messages.js';

const REPORT_EVERY_MS = 5_000;
const RESOLUTION_MS = 10;

/** Sends the cell process's CPU, memory and event-loop lag every few seconds (to the router's metrics). */
export function reportProcess(send: (stats: CellProcessStats) => void): void {
  const lag = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  lag.enable();
  setInterval(() => {
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    send({
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      residentBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      // The histogram records the whole sampling interval: the lag is what exceeds the timer's resolution.
      eventLoopLagSeconds: lag.count > 0 ? Math.max(0, lag.percentile(99) / 1e6 - RESOLUTION_MS) / 1000 : 0,
    });
    lag.reset();
  }, REPORT_EVERY_MS).unref();
}
