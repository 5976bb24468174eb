import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { InstanceOptions } from '../front/instance/instance-options.js';
import { cellAllocator } from '../cell/process/cell-allocator.js';
import { connectionLimits, readOpenFilesLimit } from '../front/edge/connection-limits.js';
import type { InstanceEnvironment } from './environment.js';

export interface StartFlags {
  apis?: string;
  publish: boolean;
  watch: boolean;
  port: number;
  listen: string;
  data: string;
  env: string;
  cells: number;
  spareThreads: number;
  sharedThreads: number;
  maxCells?: number;
  bodyLimit: number;
  maxJsonDepth: number;
  maxBusCalls: number;
  uploadLimit: number;
  deployTimeout: number;
  maxQueuedDeploys: number;
  headersTimeout: number;
  requestTimeout: number;
  drainTimeout: number;
  drainDelay: number;
  proxyProtocol: boolean;
  trustedProxy?: string;
  maxConnections?: number;
  maxConnectionsPerClient?: number;
  placementLease: number;
  internalListen?: string;
  internalPort: number;
  internalAdvertise?: string;
  maxThreads: number;
  threadConcurrency: number;
  mailbox: number;
  idleTimeout: number;
  maxIsolateMemory: number;
  maxDirectiveCpu: number;
  maxDirectiveWall: number;
  jobConcurrency: number;
  jobBackoff: number;
  jobLease: number;
  maxJobPayload: number;
  maxQueuedJobs: number;
  maxQueuedJobBytes: number;
  maxKvBytes: number;
  maxLogFile: number;
  maxLogBytes: number;
  maxLogDays: number;
  maxFilesBytes: number;
  maxDatabaseBytes: number;
  maxHostDisk: number;
  responseBuffer: number;
  maxResponseHeaders: number;
  maxResponseHeaderBytes: number;
  auditDays: number;
  auditRows: number;
  hostAbortLimit: number;
  hostAbortWindow: number;
  logFollowers: number;
  logFollowBuffer: number;
}

/** Addresses that mean "every interface": fine to bind, not to dial. */
const WILDCARD_ADDRESSES: ReadonlySet<string> = new Set(['0.0.0.0', '::', '[::]', '']);

/** Refuses flags that do not go together; returns the number of cells at most. */
export function checkStartFlags(flags: StartFlags): number {
  if (flags.apis !== undefined && (!existsSync(flags.apis) || !statSync(flags.apis).isDirectory())) {
    throw new InvalidArgumentError(`--apis: "${flags.apis}" is not a directory`);
  }
  const maxCells = flags.maxCells ?? flags.cells + 8;
  if (maxCells < flags.cells + 2) throw new InvalidArgumentError(`--max-cells: ${maxCells} leaves no room for the low-priority cell and one quarantine cell beside --cells ${flags.cells} (at least ${flags.cells + 2})`);
  if (flags.watch && flags.apis === undefined) throw new InvalidArgumentError('--watch needs --apis <dir>: it watches that directory');
  return maxCells;
}

/** The instance's options: the flags (checked), and the environment read by the CLI. */
export function instanceOptions(flags: StartFlags, maxCells: number, envExplicit: boolean, environment: InstanceEnvironment): InstanceOptions {
  const internalListen = flags.internalListen ?? flags.listen;
  // Cluster mode only: one instance has no internal listener.
  if (environment.databaseUrl !== null && flags.internalAdvertise === undefined && WILDCARD_ADDRESSES.has(internalListen)) {
    throw new InvalidArgumentError(`--internal-advertise: the internal listener binds ${internalListen}, which other instances cannot dial; give the address they reach this one at`);
  }
  return {
    dataDir: resolve(flags.data),
    port: flags.port,
    listen: flags.listen,
    env: flags.env,
    envExplicit,
    cells: flags.cells,
    spareThreads: flags.spareThreads,
    sharedThreads: flags.sharedThreads,
    maxCells,
    apisDir: flags.apis === undefined ? null : resolve(flags.apis),
    publish: flags.publish,
    watch: flags.watch,
    bodyLimit: flags.bodyLimit,
    maxJsonDepth: flags.maxJsonDepth,
    maxBusCalls: flags.maxBusCalls,
    uploadLimit: flags.uploadLimit,
    deployTimeoutMs: flags.deployTimeout,
    maxQueuedDeploys: flags.maxQueuedDeploys,
    headersTimeoutMs: flags.headersTimeout,
    requestTimeoutMs: flags.requestTimeout,
    drainTimeoutMs: flags.drainTimeout,
    drainDelayMs: flags.drainDelay,
    proxyProtocol: flags.proxyProtocol,
    trustedProxies: flags.trustedProxy ?? null,
    connections: connectionLimits(flags.maxConnections, flags.maxConnectionsPerClient, readOpenFilesLimit()),
    placement: {
      leaseMs: flags.placementLease,
      internalListen,
      internalPort: flags.internalPort,
      internalAdvertise: flags.internalAdvertise ?? internalListen,
    },
    actors: {
      maxThreads: flags.maxThreads,
      threadConcurrency: flags.threadConcurrency,
      mailbox: flags.mailbox,
      idleMs: flags.idleTimeout,
      scaleUpAfterMs: 20,
      shareThreads: flags.sharedThreads > 0,
      stuckAfterMs: flags.requestTimeout,
    },
    jobs: { concurrency: flags.jobConcurrency, backoffMs: flags.jobBackoff, leaseMs: flags.jobLease },
    responseBufferBytes: flags.responseBuffer,
    maxHostDiskBytes: flags.maxHostDisk,
    auditRetention: { days: flags.auditDays, rows: flags.auditRows },
    hostFaults: { aborts: flags.hostAbortLimit, windowMs: flags.hostAbortWindow },
    logFollow: { perApi: flags.logFollowers, bufferedBytes: flags.logFollowBuffer },
    quotas: {
      jobPayloadBytes: flags.maxJobPayload,
      queuedJobs: flags.maxQueuedJobs,
      queuedJobBytes: flags.maxQueuedJobBytes,
      kvBytes: flags.maxKvBytes,
      logFileBytes: flags.maxLogFile,
      logBytes: flags.maxLogBytes,
      logDays: flags.maxLogDays,
      filesBytes: flags.maxFilesBytes,
      responseHeaders: flags.maxResponseHeaders,
      responseHeaderBytes: flags.maxResponseHeaderBytes,
      databaseBytes: flags.maxDatabaseBytes,
    },
    sandbox: {
      maxima: { memoryMb: Math.max(8, Math.floor(flags.maxIsolateMemory / (1024 * 1024))), cpuMs: flags.maxDirectiveCpu, wallMs: flags.maxDirectiveWall },
    },
    publicHostKey: environment.publicHostKey,
    redisUrl: environment.redisUrl,
    redisPrefix: environment.redisPrefix,
    databaseUrl: environment.databaseUrl,
    egressAllow: environment.egressAllow,
    metricsToken: environment.metricsToken,
    cellNodeFlags: environment.cellNodeFlags,
    cellAllocator: cellAllocator(environment.cellMalloc, environment.ldPreload),
  };
}
