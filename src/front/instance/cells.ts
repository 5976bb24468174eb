import { CellSupervisor } from '../../cell/process/cell-supervisor.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { ActorTable } from '../scheduling/actor-table.js';
import type { Metrics } from '../meters/metrics.js';
import type { InstanceOptions } from './instance-options.js';
import type { ThreadEndpoint } from './thread-socket.js';

/** Starts the cell processes; the actor table starts and stops threads in them, and hears of their deaths. */
export async function startCells(
  options: InstanceOptions,
  log: InstanceLog,
  endpoint: ThreadEndpoint,
  actors: ActorTable,
  metrics: Metrics,
): Promise<CellSupervisor> {
  const cells = new CellSupervisor(
    {
      count: options.cells,
      spareThreads: options.spareThreads,
      sharedThreads: options.sharedThreads,
      socketPath: endpoint.socketPath,
      token: endpoint.token,
      nodeFlags: options.cellNodeFlags,
      allocator: options.cellAllocator,
    },
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
