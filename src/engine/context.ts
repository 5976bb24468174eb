import type { CompatMode, DatabaseMode } from '../shared/api-model/types.js';
import type { Continuation } from './continuation.js';
import type { Groups } from './groups.js';
import type { HeldResources } from './held-resources.js';
import type { Memory } from './memory.js';
import type { Message } from './message.js';
import type { CallBudget } from './call-budget.js';
import type { BusCall, BusResponse } from '../shared/protocol/bus-calls.js';
import type { OutgoingResponse } from '../shared/protocol/requests.js';
import type { ApiQuotas } from '../shared/quotas/api-quotas.js';
import type { KvStore } from './kv-store.js';
import type { TraceSpan, Tracer } from '../shared/tracing/trace-span.js';
import type { Dispatcher } from 'undici';

/** The error a flow carries once a directive threw: it fills `$.memory.error`. */
export interface FlowError {
  status: number;
  message: string;
  code: string;
  label: string;
  directive: string;
}

/**
 * How a request's errors are rendered once a directive chose (SetSmartError in NORMAL_FLOW): OnError
 * and the runtime's own rendering call it instead of writing `{"error": …}` as JSON.
 */
export type ErrorRenderer = (ctx: DirectiveContext, error: FlowError) => void | Promise<void>;

/**
 * Watches the entries that run once it is set (EnableDebug): the engine calls `before` with an
 * entry's resolved parameters, `after` once it ran (its error, if any, on the step), and `finish`
 * when the request is over, its AFTER_FLOW pass included. A watcher must not throw.
 */
export interface StepWatcher {
  /** `secretParams`: those the directive's schema marks `writeOnly`. */
  before(step: TraceStep, params: Readonly<Record<string, unknown>>, secretParams: ReadonlySet<string>): void;
  after(step: TraceStep, ctx: DirectiveContext): void;
  finish(ctx: DirectiveContext): void;
}

/** One entry the engine ran, in order; the Log directive writes these. */
export interface TraceStep {
  label: string;
  directive: string;
  pass: 'main' | 'after';
  error?: { status: number; message: string };
}

/** Facts about the request that no directive can change. */
export interface RequestFacts {
  readonly id: string;
  readonly ip: string;
  /** Number of in-process bus hops that led here (0 for a request from a client). */
  readonly hop: number;
  readonly viaBus: boolean;
  readonly receivedAt: number;
  readonly definitionVerb: string;
  readonly definitionPath: string;
  /** `get /users/{id}`: the endpoint as defined (its verb and path), as logs and metrics name it. */
  readonly route: string;
  readonly verb: string;
  readonly path: string;
  /** The query string as received, without `?`. */
  readonly query: string;
  /** The headers as received, flat [name, value, …], whatever directives do to the message since (empty for a job). */
  readonly headers: readonly string[];
  /** True when this runs as a queued job: no client sees the answer, errors keep their real message. */
  readonly job: boolean;
}

/** What one API release offers its directives inside its actor thread. */
export interface ApiRuntime {
  readonly key: string;
  readonly host: string;
  readonly env: string;
  readonly release: string;
  readonly debug: boolean;
  /** api.yaml `compat:`: the original system whose answers the API keeps where Anvil's differ (null: Anvil's). */
  readonly compat: CompatMode | null;
  readonly dataDir: string;
  readonly releaseDir: string;
  /** api.yaml `database:`, and the cluster's Postgres (DATABASE_URL, null without one) that `postgres` needs. */
  readonly database: { readonly mode: DatabaseMode; readonly url: string | null };
  /** This instance's own base URL (`$.memory.anvil-localhost`). */
  readonly localBaseUrl: string;
  /** The instance's ANVIL_EGRESS_ALLOW (hosts, addresses, CIDRs outgoing HTTP may reach besides public ones). */
  readonly egressAllow: string | null;
  readonly maps: Readonly<Record<string, unknown>>;
  /** How deep a JSON body may nest before reading it fails with 400 (`--max-json-depth`). */
  readonly maxJsonDepth: number;
  /** What one request may make the host hold (memory values, the response body): the API's memory limit. */
  readonly hostMemoryBytes: number;
  /** What the API may keep in shared stores: its api.yaml `limits:` capped by the instance. */
  readonly quotas: ApiQuotas;
  /**
   * A value created once per actor thread on first use and kept (a log writer, a db handle).
   * Values with a `close()` method are closed when the thread stops.
   */
  resource<T>(name: string, create: () => T): T;
  /** Work that must finish before the thread may exit (a pending log write, say). */
  track(work: Promise<unknown>): void;
  /** Queues a job for this API (SPEC §8), durably; resolves to the job id once it is stored. */
  enqueue(payload: string, delayMs: number): Promise<string>;
  /** A request to another API of this host over the in-process bus (no socket). */
  callLocal(call: BusCall, timeoutMs: number): Promise<BusResponse>;
  /** The API's request log: JSON lines in logs/ of its data dir, rotated and pruned under its quotas. */
  readonly requestLog: { append(record: Record<string, unknown>): void };
  /** Counts a refusal by one of the API's quotas (`anvil_quota_refusals_total{quota}`). */
  readonly refusals: { add(quota: string): void };
  /** Times the API's outgoing HTTP requests (`anvil_outgoing_request_duration_seconds`). */
  readonly outgoing: { observe(seconds: number): void };
  /** Makes the request and entry spans when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT); null: off, no span at all. */
  readonly tracer: Tracer | null;
  /** The API's own view of the shared key-value store (counters, caches); no other API's keys. */
  readonly kv: KvStore;
  /**
   * The view every API of this public host and env shares (RedisGet/RedisSet `global`); never
   * another host's or env's. Each write is held to this API's kv quota.
   */
  readonly envKv: KvStore;
  /** The time RateLimit, Quota, cached files and key TTLs go by, epoch ms: the real clock, or `anvil test`'s own. */
  now(): number;
  /** What outgoing HTTP goes through instead of the network (`anvil test`'s mocks); null: the network, under the egress policy. */
  readonly upstreams: Dispatcher | null;
  /** A line in the instance log, tagged with the API (for operators, never sent to clients). */
  log(level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
}

export interface DirectiveContext {
  readonly id: string;
  readonly message: Message;
  readonly memory: Memory;
  readonly groups: Groups;
  readonly api: ApiRuntime;
  readonly request: RequestFacts;
  /** The `{name}` segments of the matched endpoint's path. */
  readonly pathParams: Readonly<Record<string, string>>;
  readonly trace: readonly TraceStep[];
  /** The error being handled, once a directive threw (null otherwise). */
  readonly error: FlowError | null;
  /** The response as written to the client, once it has been (during AFTER_FLOW). */
  readonly sent: OutgoingResponse | null;
  /** This request's error rendering, when a directive chose one (null: JSON). */
  errorRenderer: ErrorRenderer | null;
  /** What watches the entries of this request, when a directive set it (null: nothing). */
  stepWatcher: StepWatcher | null;
  /** Tracing on: the span of the running entry (outgoing calls and sandbox CPU go under it); null when off. */
  readonly traceSpan: TraceSpan | null;
  /**
   * Runs another directive (a built-in or the API's own) on this request, as if it were the
   * running entry: its parameters are checked against its schema first (a 500 naming `where` and
   * the parameter when they do not fit), and its errors are this entry's.
   */
  runDirective(name: string, params: Record<string, unknown>, where: string): Promise<void>;
  /** The bus calls this request and those they lead to may still make (directives/outgoing/send.ts takes from it). */
  readonly busCalls: CallBudget;
  /** What the request holds across entries (a transaction); the engine releases it on a throw and at each pass's end. */
  readonly held: HeldResources;
  /** Throws an error with that status: the flow switches to ERROR_FLOW. */
  fail(status: number, message: string): never;
  /** The rest of this request after the running entry, frozen for a job (see continuation.ts). */
  continuation(): Continuation;
}
