import { setTimeout as delay } from 'node:timers/promises';
import { AuditLog } from '../audit/audit-log.js';
import { SqliteAuditStore } from '../audit/sqlite-audit-store.js';
import { LogFollowers } from '../../shared/logs/follow/log-followers.js';
import { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { DataDirLock } from '../../deploy/registry/data-dir-lock.js';
import { DEFAULT_ADMIN_HOST } from '../../deploy/registry/default-hosts.js';
import { Dispatcher } from '../scheduling/dispatcher.js';
import { Metrics } from '../meters/metrics.js';
import { requestObserver } from '../edge/request-observer.js';
import { createApiActors } from './api-actors.js';
import { wireBus } from './bus-wiring.js';
import { startCells } from './cells.js';
import { lockDataDir, notePort } from './data-dir.js';
import { drain, type RunningParts } from './drain.js';
import { followControlPlane } from './follow-control-plane.js';
import { createFrontDoor } from './request-listener.js';
import { listenHttp } from './http-server.js';
import type { InstanceOptions, StartedInstance } from './instance-options.js';
import { HostDiskWatch } from '../scheduling/host-disk-watch.js';
import { openJobs } from './jobs.js';
import { openPlacement } from './placement-boot.js';
import { operatorSources } from '../admin/operator-sources.js';
import { openRegistry } from './registry-boot.js';
import { openThreadServer } from './thread-socket.js';
import { watchApis } from './watcher.js';
import { logTracing } from '../../shared/tracing/log-tracing.js';

/**
 * One running `anvil start`: the registry, the cells, the socket actor threads dial, and the HTTP
 * front door. Stopping drains (see `drain`). The data directory's lock is taken first, and
 * released if starting fails.
 */
export async function startInstance(options: InstanceOptions, log: InstanceLog): Promise<StartedInstance> {
  const paths = new DataPaths(options.dataDir);
  const lock = lockDataDir(paths, log);
  try {
    return await serve(options, log, paths, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function serve(
  options: InstanceOptions,
  log: InstanceLog,
  paths: DataPaths,
  lock: DataDirLock,
): Promise<StartedInstance> {
  const { registry, controlPlane, sync, publicHost, generatedKey, deployWorker, target, deployAtBoot } =
    await openRegistry(options, log, paths);
  logTracing(log);
  let port = options.port;
  const { actors, directory } = await createApiActors(options, log, registry, paths, () => `http://localhost:${port}`);
  const threads = await openThreadServer(log, actors);
  const metrics = new Metrics(options.metricsToken);
  metrics.watchActors(() => actors.gauges());
  metrics.watchHostFaults(() => actors.hostFaults());
  actors.aborted = (api) => metrics.cellAborts.inc({ host: api.host, api: api.key });
  // The cells start while --apis is deployed (a process each, ~0.2 s); requests wait for both.
  const [cells, boot] = await Promise.all([startCells(options, log, threads, actors, metrics), deployAtBoot()]);

  let serving = true;
  const dispatcher = new Dispatcher(
    actors,
    options.requestTimeoutMs,
    requestObserver(metrics, log),
    options.maxBusCalls,
  );
  const hostDisk = new HostDiskWatch(options.dataDir, options.maxHostDiskBytes, (error) =>
    log.warn({ err: (error as Error).message }, "measuring the public hosts' disk failed"),
  );
  const jobs = await openJobs(options, { registry, directory, dispatcher, actors, metrics, hostDisk });
  const bus = wireBus(directory, dispatcher, actors, metrics);
  const audit = await AuditLog.open(SqliteAuditStore.open(paths.auditFile), log, options.auditRetention);
  const followers = new LogFollowers(options.logFollow, (dir) =>
    log.info({ dir }, 'request log follower dropped: it read too slowly'),
  );
  const operator = operatorSources({ directory, actors, metrics, jobs, cells: () => cells.count });
  const placement = await openPlacement(options, directory, actors, log);
  if (placement !== null) {
    jobs.usePlacement(placement.placeJobRun);
    bus.usePlacement(placement.placeBusCall);
  }
  const doors = createFrontDoor(
    options,
    {
      registry,
      controlPlane,
      paths,
      deployWorker,
      directory,
      dispatcher,
      actors,
      metrics,
      log,
      audit,
      followers,
      operator,
      jobs,
      ready: () => serving,
    },
    placement?.hooks ?? null,
  );
  // Cluster mode: the internal listener and a first placement round, before any client request.
  const internal =
    placement === null || doors.internalHandle === null
      ? null
      : await placement.listen(doors.internalHandle, metrics, { jobs, bus });
  const http = await listenHttp(options, doors.handle, metrics, log, options.connections);
  port = http.port;
  notePort(lock, port, paths, log);
  directory.reload();
  followControlPlane(sync, directory, actors, paths);

  // A live run renews its lease (every third of --job-lease); a run orphaned by a crash runs again
  // once its lease is out (at most --job-lease after the restart).
  jobs.start({
    concurrency: options.jobs.concurrency,
    retries: 3,
    backoffMs: options.jobs.backoffMs,
    leaseMs: options.jobs.leaseMs,
  });
  hostDisk.start();
  const refresher = setInterval(() => directory.refreshIfChanged(), 1_000);
  refresher.unref();
  const watcher = watchApis(options, log, target, directory, registry, boot);

  const running: RunningParts = {
    server: http.server,
    listener: http.listener,
    internal,
    placement,
    refresher,
    hostDisk,
    watcher,
    actors,
    jobs,
    deployWorker,
    cells,
    threadServer: threads.server,
    dispatcher,
    registry,
    controlPlane,
    audit,
    followers,
    lock,
  };
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    // Health turns 503 at once; requests are still served for the drain delay, until a balancer's
    // health checks have noticed and it sends no more.
    serving = false;
    stopping ??= delay(options.drainDelayMs).then(() => drain(running, options.drainTimeoutMs));
    return stopping;
  };
  return { port, adminHost: DEFAULT_ADMIN_HOST, publicHost, generatedKey, boot, stop };
}
