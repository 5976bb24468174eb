import { CellSupervisor } from '../cells/cell-supervisor.js';
import type { InstanceLog } from '../logs/instance-log.js';
import type { ActorTable } from '../router/actor-table.js';
import type { Metrics } from '../router/metrics.js';
import type { InstanceOptions } from './instance-options.js';
import type { ThreadEndpoint } from './thread-server.js';

/** Starts the cell processes; the actor table starts and stops threads in them, and hears of their deaths. */
export async function startCells(options: InstanceOptions, log: InstanceLog, endpoint: ThreadEndpoint, actors: ActorTable, metrics: Metrics): Promise<CellSupervisor> {
  const cells = new CellSupervisor(
    { count: options.cells, spareThreads: options.spareThreads, sharedThreads: options.sharedThreads, socketPath: endpoint.socketPath, token: endpoint.token, nodeFlags: options.cellNodeFlags, allocator: options.cellAllocator },
    {
      ...actors.cellEvents,
      down: (cell, reason, running) => {
        metrics.cellRestarts.inc({ cell: String(cell) });
        actors.cellEvents.down(cell, reason, running);
      },
      log: (cell, level, msg, fields) => log[level]({ cell, ...fields }, msg),
      processStats: (cell, stats) => metrics.cells.report(cell, stats),
    },
  );
  log.info({ allocator: options.cellAllocator.description }, 'cells: memory allocator');
  actors.useCells({
    isCellReady: (cell) => cells.isReady(cell),
    startThread: (cell, spec, thread, shared) => cells.spawnThread(cell, spec, thread, shared),
    terminateThread: (cell, actor, thread) => cells.terminateThread(cell, actor, thread),
    addCell: (nice) => cells.addCell(nice),
    retireCell: (cell) => cells.retireCell(cell),
    kill: (cell) => cells.kill(cell),
  });
  metrics.watchCells(() => cells.count);
  await cells.start();
  return cells;
}
