import type { Server } from 'node:http';
import type { Server as NetServer } from 'node:net';
import type { AuditLog } from '../audit/audit-log.js';
import type { CellSupervisor } from '../../cell/process/cell-supervisor.js';
import type { LogFollowers } from '../../shared/logs/follow/log-followers.js';
import type { ThreadServer } from '../../shared/protocol/thread-server.js';
import type { DataDirLock } from '../../deploy/registry/data-dir-lock.js';
import type { Registry } from '../../deploy/registry/registry.js';
import type { ControlPlane } from '../../deploy/control-plane/control-plane.js';
import type { ApisWatcher } from '../../deploy/releases/watch-apis.js';
import type { DeployWorker } from '../../deploy/releases/deploy-worker.js';
import type { ActorTable } from '../scheduling/actor-table.js';
import type { Dispatcher } from '../scheduling/dispatcher.js';
import type { JobRunner } from '../jobs/job-runner.js';

/** What a running instance closes when it drains. */
export interface RunningParts {
  server: Server;
  /** What listens: the HTTP server itself, also with --proxy-protocol (see front/instance/http-server.ts). */
  listener: NetServer;
  /** Cluster mode: the internal listener (requests other instances forward) and the placement that gives its leases back. */
  internal: { server: Server; listener: NetServer } | null;
  placement: { close(): Promise<void> } | null;
  refresher: NodeJS.Timeout;
  hostDisk: { stop(): void };
  watcher: ApisWatcher | null;
  actors: ActorTable;
  jobs: JobRunner;
  deployWorker: DeployWorker;
  cells: CellSupervisor;
  threadServer: ThreadServer;
  dispatcher: Dispatcher;
  registry: Registry;
  audit: AuditLog;
  followers: LogFollowers;
  controlPlane: ControlPlane;
  lock: DataDirLock;
}

/**
 * Drains a running instance within `drainTimeoutMs`: no new connections, in-flight requests and
 * their AFTER_FLOW finish, then jobs, threads, cells and the registry close, and the data
 * directory's lock is released. The front door must already refuse new work (not ready).
 */
export async function drain(parts: RunningParts, drainTimeoutMs: number): Promise<void> {
  clearInterval(parts.refresher);
  parts.hostDisk.stop();
  await parts.watcher?.close();
  const deadline = Date.now() + drainTimeoutMs;
  // Live log streams never end on their own.
  parts.followers.close();
  const listening = [parts, ...(parts.internal === null ? [] : [parts.internal])];
  await closeHttp(listening, parts.actors, deadline);
  // Jobs stop being handed out; runs in flight finish (or run again after a restart), those of
  // placed APIs this instance owns while it still holds their leases.
  await parts.jobs.close(Math.max(0, deadline - Date.now()));
  // Nothing of this instance's placed APIs runs any more: the others may take them at once.
  await parts.placement?.close();
  await parts.deployWorker.close();
  parts.actors.retireAll();
  await parts.cells.drain(Math.max(1_000, deadline - Date.now()));
  for (const { server } of listening) server.closeAllConnections();
  parts.threadServer.close();
  parts.actors.close();
  parts.dispatcher.close();
  await parts.controlPlane.close();
  parts.registry.close();
  parts.audit.close();
  parts.lock.release();
}

/** Stops accepting connections and waits (until `deadline`) for open ones and the actors' work to end. */
async function closeHttp(
  listening: ReadonlyArray<{ listener: NetServer; server: Server }>,
  actors: ActorTable,
  deadline: number,
): Promise<void> {
  // close() calls back once every connection has ended: idle ones are closed below as soon
  // as their last response is written.
  let open = listening.length;
  for (const { listener, server } of listening) {
    listener.close(() => open--);
    server.closeIdleConnections();
  }
  while ((open > 0 || !actors.idle) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    for (const { server } of listening) server.closeIdleConnections();
  }
}
