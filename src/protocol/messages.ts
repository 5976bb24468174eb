/**
 * Every message that crosses a process or thread boundary, typed in one place.
 * Router ↔ cell: Node's IPC channel (JSON), low volume (lifecycle).
 * Router ↔ actor thread, and actor thread ↔ actor thread (direct bus calls): framed sockets (frames.ts), the request path.
 */
import { STATUS_CODES } from 'node:http';
import type { SandboxLimits } from '../config/types.js';
import type { JobQuota } from '../jobs/job-queue.js';
import type { ApiQuotas } from '../quotas/api-quotas.js';
import type { FileRef } from '../static/file-ref.js';
import type { EngineRequest, OutgoingResponse } from './requests.js';
import { envelopeFrame, FrameType, jsonFrame, readEnvelope, u32Frame } from './frames.js';

/** What a cell needs to start threads for one API release. */
export interface ActorSpec {
  /** `<host>/<env>/<key>@<release>`: unique per release, so a new release gets a new actor. */
  id: string;
  host: string;
  env: string;
  key: string;
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
  stores: { dataRoot: string; redisUrl: string | null; redisPrefix: string };
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
  /** The thread's fault marker: the cell's marker file (an fd of the process) and its slot in it. */
  marker: { fd: number; slot: number } | null;
}

export interface ThreadHello {
  token: string;
  cell: number;
  /** '' from a spare that dialled ahead: its actor's hello follows on the same socket once it has one. */
  actor: string;
  thread: number;
  /** Where the thread takes bus calls straight from other actor threads (its peer socket). */
  peer?: string;
}

/** A thread of API `key` that takes bus calls straight from the caller's thread (FrameType.Peer). */
export interface PeerOffer {
  key: string;
  /** The target's actor (its release): a newer offer for the same key replaces an older one. */
  actor: string;
  address: string;
}

export function encodePeerOffer(offer: PeerOffer): Buffer {
  return jsonFrame(FrameType.Peer, offer);
}

/** Peer → caller: request `number` was not run (the peer stopped); send it through the router. */
export function notTakenFrame(number: number): Buffer {
  return u32Frame(FrameType.Retire, number);
}

/** Bus calls deeper than this are refused with 508 (SPEC §10): a cycle A → B → A stops there. */
export const MAX_BUS_HOPS = 8;

/**
 * The request a bus call becomes for its target, one hop deeper, whether the router delivers it or
 * the caller's thread sends it straight to a peer.
 */
export function busRequest(call: BusCall, id: string): EngineRequest {
  return {
    id,
    verb: call.verb,
    path: splitApiPath(call.path).path,
    rawQuery: call.rawQuery,
    rawHeaders: call.rawHeaders,
    body: call.body,
    // The calling API, not a network peer: there is no client address on the bus.
    ip: '127.0.0.1',
    hop: call.hop + 1,
    viaBus: true,
    receivedAt: Date.now(),
  };
}

/** A bus call's answer when the bus itself, not the target API, answers it (404, 508, 502…). */
export function busFailure(status: number, message: string): BusResponse {
  return { status, headers: ['content-type', 'application/json; charset=utf-8'], body: Buffer.from(JSON.stringify({ error: message || STATUS_CODES[status] })) };
}

/** `/users/42` → { key: 'users', path: '/42' }: the API a bus call names, and the path within it. */
export function splitApiPath(full: string): { key: string; path: string } {
  const slash = full.indexOf('/', 1);
  return slash < 0 ? { key: full.slice(1), path: '/' } : { key: full.slice(1, slash), path: full.slice(slash) };
}

/** workerData of a spare thread: enough to dial the router before it has an API. */
export interface SpareData {
  socketPath: string;
  token: string;
  cell: number;
}

export type RouterToCell =
  | { type: 'spawn-thread'; actor: ActorSpec; thread: number }
  /** Finish everything in flight (AFTER_FLOW included), stop every thread, exit 0. */
  | { type: 'drain' }
  /** A thread that stopped answering: terminate it (its requests fail; the router may kill the cell next). */
  | { type: 'terminate-thread'; actor: string; thread: number };

export type CellToRouter =
  | { type: 'ready'; cell: number }
  /** A thread could not start (bad release, …): requests waiting for it should fail. */
  | { type: 'thread-failed'; actor: string; thread: number; error: string }
  | { type: 'thread-exit'; actor: string; thread: number; code: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields?: Record<string, unknown> };

/** [id, verb, path, rawQuery, rawHeaders, ip, hop, viaBus, receivedAt, job?] — an array keeps the JSON small. */
type RequestMeta = [string, string, string, string, string[], string, number, 0 | 1, number, string?];

export function encodeRequest(number: number, request: EngineRequest): Buffer {
  const meta: RequestMeta = [
    request.id,
    request.verb,
    request.path,
    request.rawQuery,
    request.rawHeaders,
    request.ip,
    request.hop,
    request.viaBus ? 1 : 0,
    request.receivedAt,
  ];
  if (request.job !== undefined) meta.push(request.job);
  return envelopeFrame(FrameType.Request, number, 0, meta, request.body);
}

export function decodeRequest(payload: Buffer): { number: number; request: EngineRequest } {
  const envelope = readEnvelope(payload);
  const [id, verb, path, rawQuery, rawHeaders, ip, hop, viaBus, receivedAt, job] = envelope.meta as RequestMeta;
  // The body is copied out of the socket chunk: the request may outlive this turn.
  const body = envelope.body.length === 0 ? null : Buffer.from(envelope.body);
  const request: EngineRequest = { id, verb, path, rawQuery, rawHeaders, ip, hop, viaBus: viaBus === 1, receivedAt, body };
  if (job !== undefined) request.job = job;
  return { number: envelope.number, request };
}

/** [headers, route, file?] — the route template is a metrics label (empty when no endpoint matched); a file body instead of bytes. */
type ResponseMeta = [string[], string, FileRef?];

export function encodeResponse(number: number, response: OutgoingResponse): Buffer {
  const meta: ResponseMeta = [response.headers, response.route ?? ''];
  if (response.file !== undefined) meta.push(response.file);
  return envelopeFrame(FrameType.Response, number, response.status, meta, response.body);
}

/** The body is a view into the socket chunk, valid until the end of the current turn. */
export function decodeResponse(payload: Buffer): { number: number; response: { status: number; headers: string[]; body: Buffer; route: string; file?: FileRef } } {
  const envelope = readEnvelope(payload);
  const [headers, route, file] = envelope.meta as ResponseMeta;
  const response = { status: envelope.small, headers, body: envelope.body, route };
  return { number: envelope.number, response: file === undefined ? response : { ...response, file } };
}

export function encodeHello(hello: ThreadHello): Buffer {
  return jsonFrame(FrameType.Hello, hello);
}

/** What an actor thread reports about itself (FrameType.Stats), for /anvil/metrics. */
export interface ThreadStats {
  /** Bytes used on the heaps of its isolates (custom directives), 0 when it has none. */
  isolateHeapBytes: number;
  isolates: number;
  /** CPU the thread used for its API over the last `windowMs`: its event loop and its isolates. */
  cpuMs: number;
  windowMs: number;
  /** Requests (and job runs) that arrived in the window. */
  requests: number;
  /** Requests its peers sent straight to it since the last report, for the router's metrics. */
  served?: ServedCount[];
  /** Calls it sent straight to peers since the last report (anvil_bus_calls_total). */
  peerCalls?: number;
  /** CPU its custom directive calls used since the last report, by directive. */
  sandboxCpu?: SandboxCpuCount[];
  /** [quota, refusals] its API met since the last report (anvil_quota_refusals_total). */
  quotaRefusals?: Array<[string, number]>;
  /** [reason (age, size), files] its log retention removed since the last report. */
  logFilesRemoved?: Array<[string, number]>;
}

/** [directive, calls, CPU seconds summed, calls per SANDBOX_CPU_BUCKETS bucket (+Inf last)]. */
export type SandboxCpuCount = [string, number, number, number[]];

/** Upper bounds (s) of the sandbox CPU per call histogram: a trivial call costs ~10 µs. */
export const SANDBOX_CPU_BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** [route, status, count, seconds summed, count per LATENCY_BUCKETS bucket (+Inf last)]. */
export type ServedCount = [string, number, number, number, number[]];

/** Upper bounds (s) of the request latency histogram, shared by the router and the threads. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The index of the histogram bucket `seconds` falls in (LATENCY_BUCKETS.length: +Inf). */
export function latencyBucket(seconds: number): number {
  return bucketOf(LATENCY_BUCKETS, seconds);
}

/** The index of the first upper bound `value` does not exceed (bounds.length: +Inf). */
export function bucketOf(bounds: readonly number[], value: number): number {
  let b = 0;
  while (b < bounds.length && value > bounds[b]!) b++;
  return b;
}

export function encodeStats(stats: ThreadStats): Buffer {
  return jsonFrame(FrameType.Stats, stats);
}

/** A request from one API to another of its host over the in-process bus (no socket). */
export interface BusCall {
  verb: string;
  /** `/<key>/<endpoint path>`: the first segment names the API. */
  path: string;
  rawQuery: string;
  rawHeaders: string[];
  body: Buffer | null;
  /** Bus hops that led to the caller (its request's hop); the router adds one. */
  hop: number;
}

export interface BusResponse {
  status: number;
  headers: string[];
  body: Buffer;
}

type CallMeta = [string, string, string, string[], number];

export function encodeCall(number: number, call: BusCall): Buffer {
  const meta: CallMeta = [call.verb, call.path, call.rawQuery, call.rawHeaders, call.hop];
  return envelopeFrame(FrameType.Call, number, 0, meta, call.body);
}

export function decodeCall(payload: Buffer): { number: number; call: BusCall } {
  const envelope = readEnvelope(payload);
  const [verb, path, rawQuery, rawHeaders, hop] = envelope.meta as CallMeta;
  const body = envelope.body.length === 0 ? null : Buffer.from(envelope.body);
  return { number: envelope.number, call: { verb, path, rawQuery, rawHeaders, hop, body } };
}

export function encodeCallResult(number: number, response: { status: number; headers: string[]; body: Buffer | string | null }): Buffer {
  return envelopeFrame(FrameType.CallResult, number, response.status, response.headers, response.body);
}

export function decodeCallResult(payload: Buffer): { number: number; response: BusResponse } {
  const envelope = readEnvelope(payload);
  return { number: envelope.number, response: { status: envelope.small, headers: envelope.meta as string[], body: Buffer.from(envelope.body) } };
}

/** A job to store, from an actor thread (ForTheWorker). */
export interface EnqueueRequest {
  payload: string;
  delayMs: number;
  /** The API's job quotas as its api.yaml sets them (the router caps them by the instance's). */
  quota: JobQuota;
}

/** A refusal carries the error's code, and `retryAfter` (seconds) when a later try may pass. */
export type EnqueueOutcome = { ok: true; id: string } | { ok: false; status: number; error: string; code?: string; retryAfter?: number };

export function encodeEnqueue(number: number, request: EnqueueRequest): Buffer {
  const { delayMs, quota } = request;
  return envelopeFrame(FrameType.Enqueue, number, 0, [delayMs, quota.maxPayloadBytes, quota.maxQueued], Buffer.from(request.payload));
}

export function decodeEnqueue(payload: Buffer): { number: number; request: EnqueueRequest } {
  const envelope = readEnvelope(payload);
  const [delayMs, maxPayloadBytes, maxQueued] = envelope.meta as [number, number, number];
  return { number: envelope.number, request: { delayMs, quota: { maxPayloadBytes, maxQueued }, payload: envelope.body.toString('utf8') } };
}

export function encodeEnqueueResult(number: number, outcome: EnqueueOutcome): Buffer {
  return envelopeFrame(FrameType.EnqueueResult, number, outcome.ok ? 0 : 1, outcome, null);
}

export function decodeEnqueueResult(payload: Buffer): { number: number; outcome: EnqueueOutcome } {
  const envelope = readEnvelope(payload);
  return { number: envelope.number, outcome: envelope.meta as EnqueueOutcome };
}
