import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CellSupervisor } from '../cells/cell-supervisor.js';
import { DataPaths } from '../config/data-paths.js';
import type { InstanceLog } from '../logs/instance-log.js';
import { acquireDataDirLock, type DataDirLock } from '../registry/data-dir-lock.js';
import { ensureDefaultHosts, DEFAULT_ADMIN_HOST } from '../registry/default-hosts.js';
import { handleManagement } from '../registry/management-api.js';
import { Registry, type PublicHost } from '../registry/registry.js';
import { bootDeploy, deployApisFolder, type BootDeployReport } from '../releases/boot-deploy.js';
import { ApisWatcher } from '../releases/watch-apis.js';
import { deployUpload } from '../releases/deploy.js';
import { DeployWorker } from '../releases/deploy-worker.js';
import { defaultUnpackLimits } from '../releases/upload-limits.js';
import type { ActorSpec } from '../protocol/cell-messages.js';
import type { ActorLimits } from './actor-handle.js';
import { ActorTable } from './actor-table.js';
import { ApiDirectory } from './api-directory.js';
import { Bus } from './bus.js';
import { answerClientError } from './client-error.js';
import { Dispatcher } from './dispatcher.js';
import { FrontDoor } from './front-door.js';
import { Metrics } from './metrics.js';
import { requestObserver } from './request-observer.js';
import { JobRunner } from './job-runner.js';
import { openJobQueue } from '../jobs/open-queue.js';
import { apiIdentity } from '../cells/assign.js';
import { QUOTA_NAMES, type ApiQuotas } from '../quotas/api-quotas.js';
import { ResponseBuffer } from './response-buffer.js';
import { WIRE_VERSION } from '../protocol/hello.js';
import { ThreadServer } from '../protocol/thread-server.js';

export interface InstanceOptions {
  dataDir: string;
  port: number;
  listen: string;
  env: string;
  /** True when --env was given: it then updates the default public host's env. */
  envExplicit: boolean;
  cells: number;
  /** Every cell at most, the low-priority and quarantine cells included (at least cells + 2). */
  maxCells: number;
  apisDir: string | null;
  publish: boolean;
  /** Redeploy a sub-folder of `apisDir` when its files change. */
  watch: boolean;
  bodyLimit: number;
  /** How deep a JSON request body may nest (400 deeper). */
  maxJsonDepth: number;
  uploadLimit: number;
  /** Time a deploy may spend unpacking, validating and staging in the deploy worker (400 after). */
  deployTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  drainTimeoutMs: number;
  actors: ActorLimits;
  /** Maxima for custom directives (api.yaml `limits:` cannot go above) and isolates per thread. */
  sandbox: ActorSpec['sandbox'];
  /** Jobs running at once (one per API at most), and the backoff of the first retry. */
  jobs: { concurrency: number; backoffMs: number };
  /** Ceilings (and defaults) of every API's quotas on shared stores. */
  quotas: ApiQuotas;
  /** Large response bodies the router may hold for clients, in all, before it cuts the slowest. */
  responseBufferBytes: number;
}

/** The deploy worker's heap: a deploy within every input limit needs a fraction of it. */
const DEPLOY_WORKER_MEMORY_MB = 256;

export interface StartedInstance {
  port: number;
  adminHost: string;
  publicHost: PublicHost;
  generatedKey: string | null;
  boot: BootDeployReport | null;
  stop(): Promise<void>;
}

/**
 * One running `anvil start`: the registry, the cells, the socket actor threads dial, and the HTTP
 * front door. Stopping drains: no new connections, in-flight requests and their AFTER_FLOW finish,
 * then threads, cells and the registry close, and the data directory's lock is released.
 */
export async function startInstance(options: InstanceOptions, log: InstanceLog): Promise<StartedInstance> {
  const paths = new DataPaths(options.dataDir);
  mkdirSync(paths.platformDir, { recursive: true });
  // Before anything else reads or writes the data directory: a refused second instance changes nothing.
  const lock = acquireDataDirLock(options.dataDir, paths.instanceLockFile);
  if (lock.tookOver) {
    const previous = lock.tookOverFrom;
    log.warn({ lockFile: paths.instanceLockFile, previousPid: previous?.pid ?? null }, previous === null ? 'took over an unreadable instance lock' : `took over the instance lock of PID ${previous.pid}, which is no longer running`);
  }
  try {
    return await serve(options, log, paths, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function serve(options: InstanceOptions, log: InstanceLog, paths: DataPaths, lock: DataDirLock): Promise<StartedInstance> {
  mkdirSync(paths.tmpDir, { recursive: true });
  const registry = Registry.open(paths.registryFile);
  const { publicHost, generatedKey } = ensureDefaultHosts(registry, paths, {
    env: options.env,
    envExplicit: options.envExplicit,
    keyFromEnv: process.env.ANVIL_PUBLIC_HOST_KEY,
  });

  const deployWorker = new DeployWorker({ budgetMs: options.deployTimeoutMs, memoryMb: DEPLOY_WORKER_MEMORY_MB });
  let boot: BootDeployReport | null = null;
  if (options.apisDir !== null) {
    boot = await bootDeploy(options.apisDir, { registry, paths, host: publicHost, worker: deployWorker }, options.publish);
    for (const bad of boot.invalid) log.error({ folder: bad.folder, errors: bad.errors }, `API folder "${bad.folder}" is invalid and was skipped`);
  }

  let port = options.port;
  const actors = new ActorTable(options.cells, options.maxCells, options.actors, (level, msg, fields) => log[level](fields ?? {}, msg));
  // ANVIL_REDIS_PREFIX keeps instances that share a Redis apart (tests, several installations).
  const redisPrefix = process.env.ANVIL_REDIS_PREFIX ?? 'anvil:';
  const stores = { dataRoot: options.dataDir, redisUrl: process.env.REDIS_URL ?? null, redisPrefix };
  const directory = new ApiDirectory(registry, paths, () => `http://localhost:${port}`, options.sandbox, options.quotas, stores, process.env.ANVIL_EGRESS_ALLOW ?? null, options.maxJsonDepth, (ids) => ids.forEach((id) => actors.supersede(id)));
  directory.reload();

  const token = randomBytes(24).toString('base64url');
  const socketPath = process.platform === 'linux' ? `\0anvil-${process.pid}-${randomBytes(6).toString('hex')}` : join(await mkdtemp(join(tmpdir(), 'anvil-')), 'router.sock');
  const threadServer = new ThreadServer(
    socketPath,
    token,
    (hello) =>
      log.error(
        { cell: hello.cell, actor: hello.actor, thread: hello.thread, version: hello.version, routerVersion: WIRE_VERSION },
        `refused an actor thread of cell ${hello.cell}: it speaks wire version ${hello.version}, this router speaks ${WIRE_VERSION} (the cell runs another build of anvil)`,
      ),
    (hello, socket, reader) => actors.threadArrived(hello, socket, reader),
  );
  await threadServer.listen();

  const metrics = new Metrics(process.env.ANVIL_METRICS_TOKEN);
  metrics.watchActors(() => actors.gauges());
  const cells = new CellSupervisor(
    { count: options.cells, socketPath, token, nodeFlags: (process.env.ANVIL_CELL_NODE_FLAGS ?? '').split(' ').filter(Boolean) },
    {
      ...actors.cellEvents,
      down: (cell, reason, running) => {
        metrics.cellRestarts.inc({ cell: String(cell) });
        actors.cellEvents.down(cell, reason, running);
      },
      log: (cell, level, msg, fields) => log[level]({ cell, ...fields }, msg),
    },
  );
  actors.useCells({
    isCellReady: (cell) => cells.isReady(cell),
    startThread: (cell, spec, thread) => cells.spawnThread(cell, spec, thread),
    terminateThread: (cell, actor, thread) => cells.terminateThread(cell, actor, thread),
    addCell: (nice) => cells.addCell(nice),
    retireCell: (cell) => cells.retireCell(cell),
    kill: (cell) => cells.kill(cell),
  });
  metrics.watchCells(() => cells.count);
  await cells.start();

  let state: 'serving' | 'draining' = 'serving';
  const uploadLimits = { ...defaultUnpackLimits, maxUploadBytes: options.uploadLimit, maxUnpackedBytes: options.uploadLimit };
  const deployArchive = (req: IncomingMessage, host: PublicHost) => deployUpload(req, uploadLimits, { registry, paths, host, worker: deployWorker });
  const dispatcher = new Dispatcher(actors, options.requestTimeoutMs, requestObserver(metrics, log));
  const queue = await openJobQueue({ dataDir: options.dataDir, redisUrl: process.env.REDIS_URL, prefix: redisPrefix });
  const jobs = new JobRunner(queue, directory, dispatcher, (caller, quota) => metrics.quotaRefusals.inc({ host: caller.host, api: caller.key, quota }));
  actors.useJobs((caller, request) => jobs.enqueue(caller, request));
  metrics.watchQueue(async () => {
    const out: Array<{ host: string; api: string; counts: Awaited<ReturnType<typeof queue.counts>> }> = [];
    for (const host of directory.publicHosts()) {
      for (const key of registry.listApiKeys(host.name)) out.push({ host: host.name, api: key, counts: await queue.counts(apiIdentity(host.name, host.env, key)) });
    }
    return out;
  });
  const bus = new Bus(directory, dispatcher);
  actors.useBus(
    (caller, call, reply, offerPeer) => {
      metrics.busCalls.inc({ host: caller.host, api: caller.key });
      bus.call(caller, call, reply, offerPeer);
    },
    (spec, stats) => metrics.observeThread(spec.host, spec.key, stats),
  );
  const responses = new ResponseBuffer(options.responseBufferBytes, (owner) => metrics.quotaRefusals.inc({ host: owner.host, api: owner.key, quota: QUOTA_NAMES.responseBuffer }));
  metrics.watchResponseBuffer(() => responses.bytes);
  const frontDoor = new FrontDoor(
    {
      directory,
      dispatcher,
      responses,
      ready: () => state === 'serving',
      log,
      metrics: (req, res) => metrics.handle(req, res),
      management: (req, res, path, host) =>
        handleManagement(req, res, path, host, { registry, directory, paths, deployUpload: deployArchive, retireApi: (h, k) => actors.supersedeApi(h, k) }),
    },
    { bodyLimit: options.bodyLimit },
  );

  // node's requestTimeout bounds receiving a request (headers and body); our request timeout (504)
  // bounds the API's answer and is enforced by the front door.
  const receiveTimeoutMs = Math.max(options.headersTimeoutMs, 30_000);
  const server: Server = createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: receiveTimeoutMs,
      keepAliveTimeout: 5_000,
      // node checks both timeouts only this often (30 s by default): check at least every second.
      connectionsCheckingInterval: Math.min(1_000, options.headersTimeoutMs),
    },
    frontDoor.handle,
  );
  server.on('connection', () => metrics.connections.inc());
  server.on('clientError', answerClientError(log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.listen, () => resolve());
  });
  const address = server.address();
  port = typeof address === 'object' && address !== null ? address.port : options.port;
  try {
    lock.notePort(port);
  } catch (error) {
    log.warn({ err: error, lockFile: paths.instanceLockFile }, 'could not record the port in the instance lock');
  }
  directory.reload();

  // A live run renews its lease every few seconds; a run orphaned by a crash runs again once its
  // lease is out (at most 10 s after the restart).
  jobs.start({ concurrency: options.jobs.concurrency, retries: 3, backoffMs: options.jobs.backoffMs, leaseMs: 10_000 });

  const refresher = setInterval(() => directory.refreshIfChanged(), 1_000);
  refresher.unref();

  let watcher: ApisWatcher | null = null;
  if (options.watch && options.apisDir !== null) {
    const apisDir = options.apisDir;
    watcher = new ApisWatcher(apisDir, {
      settleMs: 150,
      redeploy: async (name) => {
        try {
          const result = await deployApisFolder(apisDir, name, { registry, paths, host: publicHost, worker: deployWorker }, options.publish);
          if (!result.ok) {
            log.error({ folder: name, errors: result.errors }, `API folder "${name}" changed and is invalid: its last good release keeps serving`);
            return;
          }
          if (!result.created) return;
          directory.reload();
          log.info({ folder: name, api: result.key, release: result.release }, `redeployed ${result.key} (release ${result.release})`);
        } catch (error) {
          log.error({ folder: name, err: error }, `redeploying API folder "${name}" failed`);
        }
      },
      onError: (error) => log.error({ err: error }, 'watching the API folders failed; changes are no longer redeployed'),
    });
    watcher.start();
    log.info({ apis: apisDir }, 'watching the API folders for changes');
  }

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      state = 'draining';
      clearInterval(refresher);
      await watcher?.close();
      // close() calls back once every connection has ended: idle ones are closed below as soon
      // as their last response is written.
      let connectionsOpen = true;
      server.close(() => (connectionsOpen = false));
      server.closeIdleConnections();
      const deadline = Date.now() + options.drainTimeoutMs;
      while ((connectionsOpen || !actors.idle) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        server.closeIdleConnections();
      }
      // Jobs stop being handed out; runs in flight finish (or run again after a restart).
      await jobs.close(Math.max(0, deadline - Date.now()));
      await deployWorker.close();
      actors.retireAll();
      await cells.drain(Math.max(1_000, deadline - Date.now()));
      server.closeAllConnections();
      threadServer.close();
      actors.close();
      dispatcher.close();
      registry.close();
      lock.release();
    })();
    return stopping;
  };

  return { port, adminHost: DEFAULT_ADMIN_HOST, publicHost, generatedKey, boot, stop };
}
