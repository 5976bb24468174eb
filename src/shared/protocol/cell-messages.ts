/**
 * Router ↔ cell: the messages of Node's IPC channel (JSON), low volume (lifecycle). Cell ↔ actor
 * thread: what a cell hands the threads it starts (workerData, then `assign`), and what they tell
 * it (worker_threads messages).
 */
import type { SandboxLimits } from '../api-model/types.js';
import type { ApiQuotas } from '../quotas/api-quotas.js';
import type { ApiId } from './api-id.js';

/** What a cell needs to start threads for one API release: the API (host, env, key), and more. */
export interface ActorSpec extends ApiId {
  /** `<host>/<env>/<key>@<release>` (formatActorId): unique per release, so a new release gets a new actor. */
  id: string;
  release: string;
  /** The release's files (api.yaml, Directives, Maps, Assets). */
  releaseDir: string;
  /** The compiled release (CompiledRelease JSON). */
  compiledFile: string;
  /** The API's own data directory `<data>/<host>/<env>/<key>/`. */
  dataDir: string;
  localBaseUrl: string;
  /** The instance's maxima for custom directives' limits. */
  sandbox: { maxima: SandboxLimits };
  /** The instance's ceilings on shared stores (api.yaml `limits:` may ask for less). */
  quotas: ApiQuotas;
  /** Where the shared stores are: the instance's data dir (embedded) or Redis. */
  /** `databaseUrl`: the cluster's Postgres (DATABASE_URL) for APIs with `database: postgres`. */
  stores: { dataRoot: string; redisUrl: string | null; redisPrefix: string; databaseUrl: string | null };
  /** ANVIL_EGRESS_ALLOW of the instance (threads see no environment). */
  egressAllow: string | null;
  /** How deep a JSON body may nest (`--max-json-depth`). */
  maxJsonDepth: number;
}

/** workerData of an actor thread. */
export interface ThreadData {
  spec: ActorSpec;
  thread: number;
  socketPath: string;
  token: string;
  cell: number;
  /** A shared thread serves many quiet actors; a dedicated one serves this actor alone. */
  shared: boolean;
  /** The thread's fault marker: the cell's marker file (an fd of the process) and its slot in it (`shared`: the shared thread's, which its actors take turns to name). */
  marker: { fd: number; slot: number; shared: boolean } | null;
}

/** workerData of a spare thread: enough to dial the router before it has an API. */
export interface SpareData {
  socketPath: string;
  token: string;
  cell: number;
}

/** A line for the instance log, from a thread to its cell and from the cell to the router. */
export type LogMessage = {
  type: 'log';
  level: 'info' | 'warn' | 'error';
  msg: string;
  fields?: Record<string, unknown>;
};

export type RouterToCell =
  /** A thread for the actor: a place on one of the cell's shared threads, or a thread of its own. */
  | { type: 'spawn-thread'; actor: ActorSpec; thread: number; shared: boolean }
  /** Finish everything in flight (AFTER_FLOW included), stop every thread, exit 0. */
  | { type: 'drain' }
  /** A thread that stopped answering: terminate it (its requests fail; the router may kill the cell next). */
  | { type: 'terminate-thread'; actor: string; thread: number };

export type CellToRouter =
  | { type: 'ready'; cell: number }
  /** A thread could not start (bad release, …): requests waiting for it should fail. */
  | { type: 'thread-failed'; actor: string; thread: number; error: string }
  | { type: 'thread-exit'; actor: string; thread: number; code: number }
  /** The cell process's own figures, every few seconds (router metrics `anvil_cell_*`). */
  | { type: 'process'; stats: CellProcessStats }
  | LogMessage;

export interface CellProcessStats {
  /** CPU (user + system) since the process started, every thread of it included. */
  cpuSeconds: number;
  residentBytes: number;
  heapUsedBytes: number;
  /** The cell's main event loop: the 99th percentile of its delay over the last report period. */
  eventLoopLagSeconds: number;
}

/** Cell → actor thread (a spare until then): an API release it serves from now on (a shared thread takes many). */
export type CellToThread =
  | { type: 'assign'; data: ThreadData }
  /** Be a shared thread from now on, before any actor is assigned (a cell's shared threads start with it). */
  | { type: 'share' };

/** An actor on a thread: its actor id and thread number. */
export interface ActorOnThread {
  actor: string;
  thread: number;
}

export type ThreadToCell =
  /** A spare's modules are loaded: it can take an API at once. */
  | { type: 'spare-ready' }
  /** The assigned actor is serving: a crash from here on is its thread dying, not it failing to start. */
  | ({ type: 'started' } & ActorOnThread)
  /** The actor could not start (its release does not load, say). */
  | ({ type: 'actor-failed'; error: string } & ActorOnThread)
  /** The actor retired and answered everything it had (the thread may serve others). */
  | ({ type: 'actor-exit' } & ActorOnThread)
  | LogMessage;
