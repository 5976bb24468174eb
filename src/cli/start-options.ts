import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { InstanceOptions } from '../front/instance/instance-options.js';
import { cellAllocator } from '../cell/process/cell-allocator.js';
import { connectionLimits, readOpenFilesLimit } from '../front/edge/connection-limits.js';
import type { StartValues } from './start-table.js';

/** Addresses that mean "every interface": fine to bind, not to dial. */
const WILDCARD_ADDRESSES: ReadonlySet<string> = new Set(['0.0.0.0', '::', '[::]', '']);

/** Refuses options that do not go together; returns the number of cells at most. */
function checkTogether(values: StartValues): number {
  if (values.apis !== null && (!existsSync(values.apis) || !statSync(values.apis).isDirectory())) {
    throw new InvalidArgumentError(`--apis: "${values.apis}" is not a directory`);
  }
  const maxCells = values.maxCells ?? values.cells + 8;
  if (maxCells < values.cells + 2)
    throw new InvalidArgumentError(
      `--max-cells: ${maxCells} leaves no room for the low-priority cell and one quarantine cell beside --cells ${values.cells} (at least ${values.cells + 2})`,
    );
  if (values.watch && values.apis === null)
    throw new InvalidArgumentError('--watch needs --apis <dir>: it watches that directory');
  return maxCells;
}

/** The instance's options, from the values of the table's options (checked here where they go together). */
export function instanceOptions(values: StartValues, envExplicit: boolean): InstanceOptions {
  const maxCells = checkTogether(values);
  const internalListen = values.internalListen ?? values.listen;
  // Cluster mode only: one instance has no internal listener.
  if (values.databaseUrl !== null && values.internalAdvertise === null && WILDCARD_ADDRESSES.has(internalListen)) {
    throw new InvalidArgumentError(
      `--internal-advertise: the internal listener binds ${internalListen}, which other instances cannot dial; give the address they reach this one at`,
    );
  }
  return {
    dataDir: resolve(values.data),
    port: values.port,
    listen: values.listen,
    env: values.env,
    envExplicit,
    cells: values.cells,
    spareThreads: values.spareThreads,
    sharedThreads: values.sharedThreads,
    maxCells,
    apisDir: values.apis === null ? null : resolve(values.apis),
    publish: values.publish,
    watch: values.watch,
    bodyLimit: values.bodyLimit,
    maxJsonDepth: values.maxJsonDepth,
    maxBusCalls: values.maxBusCalls,
    uploadLimit: values.uploadLimit,
    deployTimeoutMs: values.deployTimeout,
    maxQueuedDeploys: values.maxQueuedDeploys,
    headersTimeoutMs: values.headersTimeout,
    requestTimeoutMs: values.requestTimeout,
    drainTimeoutMs: values.drainTimeout,
    drainDelayMs: values.drainDelay,
    proxyProtocol: values.proxyProtocol,
    trustedProxies: values.trustedProxy,
    connections: connectionLimits(
      values.maxConnections ?? undefined,
      values.maxConnectionsPerClient ?? undefined,
      readOpenFilesLimit(),
    ),
    placement: {
      leaseMs: values.placementLease,
      internalListen,
      internalPort: values.internalPort,
      internalAdvertise: values.internalAdvertise ?? internalListen,
    },
    actors: {
      maxThreads: values.maxThreads,
      threadConcurrency: values.threadConcurrency,
      mailbox: values.mailbox,
      idleMs: values.idleTimeout,
      scaleUpAfterMs: 20,
      shareThreads: values.sharedThreads > 0,
      stuckAfterMs: values.requestTimeout,
    },
    jobs: { concurrency: values.jobConcurrency, backoffMs: values.jobBackoff, leaseMs: values.jobLease },
    responseBufferBytes: values.responseBuffer,
    maxHostDiskBytes: values.maxHostDisk,
    auditRetention: { days: values.auditDays, rows: values.auditRows },
    hostFaults: { aborts: values.hostAbortLimit, windowMs: values.hostAbortWindow },
    logFollow: { perApi: values.logFollowers, bufferedBytes: values.logFollowBuffer },
    quotas: {
      jobPayloadBytes: values.maxJobPayload,
      queuedJobs: values.maxQueuedJobs,
      queuedJobBytes: values.maxQueuedJobBytes,
      kvBytes: values.maxKvBytes,
      logFileBytes: values.maxLogFile,
      logBytes: values.maxLogBytes,
      logDays: values.maxLogDays,
      filesBytes: values.maxFilesBytes,
      responseHeaders: values.maxResponseHeaders,
      responseHeaderBytes: values.maxResponseHeaderBytes,
      databaseBytes: values.maxDatabaseBytes,
    },
    sandbox: {
      maxima: {
        memoryMb: Math.max(8, Math.floor(values.maxIsolateMemory / (1024 * 1024))),
        cpuMs: values.maxDirectiveCpu,
        wallMs: values.maxDirectiveWall,
      },
    },
    publicHostKey: values.publicHostKey,
    redisUrl: values.redisUrl,
    redisPrefix: values.redisPrefix,
    databaseUrl: values.databaseUrl,
    egressAllow: values.egressAllow,
    metricsToken: values.metricsToken,
    cellNodeFlags: values.cellNodeFlags,
    cellAllocator: cellAllocator(values.cellMalloc, values.ldPreload),
  };
}
