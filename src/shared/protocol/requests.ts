/**
 * The request an actor thread runs and the response it sends back: what crosses the router ↔
 * thread socket (and a peer's) on the request path.
 */
import type { FileRef } from './file-ref.js';
import {
  bodySize,
  envelopeFrame,
  envelopeHead,
  FrameType,
  readEnvelope,
  readEnvelopeLabel,
  type BodyBytes,
} from './frames.js';

/** One HTTP request, relative to the API's base path. */
export interface IncomingRequest {
  verb: string;
  path: string;
  rawQuery: string;
  /** Flat [name, value, name, value, …] as received (node's rawHeaders). */
  rawHeaders: string[];
  body: Buffer | null;
}

/** A request as it reaches the engine inside the actor thread. */
export interface EngineRequest extends IncomingRequest {
  id: string;
  ip: string;
  hop: number;
  /** Bus calls this request and the requests its calls lead to may still make (engine/call-budget.ts). */
  budget: number;
  viaBus: boolean;
  receivedAt: number;
  /** Set when this is a queued job (SPEC §8): its Continuation, as JSON. `id` is the job id. */
  job?: string;
}

/** What the engine hands back, the message as a response: what the router writes to the client. */
export interface OutgoingResponse {
  status: number;
  /** Flat [name, value, …]; a multi-valued header repeats its name. */
  headers: string[];
  body: Buffer | string | null;
  /** Instead of `body` (null then): a file the router streams to the client (see shared/protocol/file-ref.ts). */
  file?: FileRef;
  /** The endpoint that answered (`get /users/{id}`): a metrics label, never sent to the client; empty or absent when none did. */
  route?: string;
  /** A bus call's answer: what its request did not use of the call's lease (engine/call-budget.ts); absent: all spent. */
  budgetLeft?: number;
}

/**
 * A request as the router holds and sends it: an EngineRequest whose body may still be in the
 * chunks it arrived in (readBody). The router never joins them: they follow the frame's head on the
 * socket one after the other (see encodeRequestHead).
 */
export interface RoutedRequest extends Omit<EngineRequest, 'body'> {
  body: BodyBytes;
}

/** [id, verb, path, rawQuery, rawHeaders, ip, hop, viaBus, receivedAt, budget, job?] — an array keeps the JSON small. */
type RequestMeta = [string, string, string, string, string[], string, number, 0 | 1, number, number, string?];

/**
 * The head of a Request frame; `request.body` follows it as it is: `writer.writeFrame(head,
 * request.body)`. The body is not copied on its way out (no copy into the frame, none into a batch:
 * see FrameWriter).
 */
export function encodeRequestHead(number: number, request: RoutedRequest): Buffer {
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
    request.budget,
  ];
  if (request.job !== undefined) meta.push(request.job);
  return envelopeHead(FrameType.Request, number, 0, meta, bodySize(request.body));
}

/**
 * The request in a Request frame. Its body is a view into the frame, not a copy: it keeps the
 * frame's memory (the socket chunk it came in) alive while the request lives, which is what the
 * request needs anyway.
 *
 * Where a request body is copied between the chunks the router received it in and this decoded
 * request: at most once, in the FrameReader of the thread, which joins a frame that arrived in
 * several chunks of the socket (one over ~64 KB always does). Not in readBody (its chunks are kept
 * apart), nor in the frame (written after its head, see encodeRequestHead), nor in the router's
 * batch of frames (a writev), nor here. (readBody joins only a body sent in many tiny pieces.) A
 * bus call's body crosses two sockets, caller → router → target, and is not copied on the router
 * either: it may be joined once by each reader, when its frame arrived there in several chunks.
 */
export function decodeRequest(payload: Buffer): { number: number; request: EngineRequest } {
  const envelope = readEnvelope(payload);
  const [id, verb, path, rawQuery, rawHeaders, ip, hop, viaBus, receivedAt, budget, job] = envelope.meta as RequestMeta;
  const body = envelope.body.length === 0 ? null : envelope.body;
  const request: EngineRequest = {
    id,
    verb,
    path,
    rawQuery,
    rawHeaders,
    ip,
    hop,
    budget,
    viaBus: viaBus === 1,
    receivedAt,
    body,
  };
  if (job !== undefined) request.job = job;
  return { number: envelope.number, request };
}

/**
 * [headers, file?, budgetLeft?] — a file body instead of bytes (null when only budgetLeft follows),
 * and a bus answer's unused lease. (The route travels as the envelope's label.)
 */
export type ResponseMeta = [string[], (FileRef | null)?, number?];

/** A decoded response, as the router writes it to a client. */
export interface DecodedResponse {
  status: number;
  headers: string[];
  /** A view into the frame (see decodeRequest). */
  body: Buffer;
  route: string;
  file?: FileRef;
  /** A bus call's answer: what its request did not use of the call's lease. */
  budgetLeft?: number;
}

/**
 * A Response frame: [u32 number][u16 status][route, the envelope's label][headers JSON][body]. The
 * route sits before the JSON so that the router can read status and route of a response it
 * forwards without decoding it (readResponseBytes).
 */
export function encodeResponse(number: number, response: OutgoingResponse): Buffer {
  const meta: ResponseMeta = [response.headers];
  if (response.file !== undefined || response.budgetLeft !== undefined) meta.push(response.file ?? null);
  if (response.budgetLeft !== undefined) meta.push(response.budgetLeft);
  return envelopeFrame(FrameType.Response, number, response.status, meta, response.body, response.route ?? '');
}

export function decodeResponse(payload: Buffer): { number: number; response: DecodedResponse } {
  return { number: responseNumber(payload), response: readResponse(payload) };
}

/** The request number a Response payload answers. */
export function responseNumber(payload: Buffer): number {
  return payload.readUInt32LE(0);
}

/** The response in a Response payload (the number aside). */
export function readResponse(payload: Buffer): DecodedResponse {
  const envelope = readEnvelope(payload);
  const [headers, file, budgetLeft] = envelope.meta as ResponseMeta;
  const response: DecodedResponse = { status: envelope.small, headers, body: envelope.body, route: envelope.label };
  if (file !== undefined && file !== null) response.file = file;
  if (budgetLeft !== undefined) response.budgetLeft = budgetLeft;
  return response;
}

/**
 * A response the router forwards without decoding it (a bus call's answer): the Response payload as
 * it came, with only what the router reads of it, its status and its route (metrics). Its headers'
 * JSON is not parsed and its body not touched.
 */
export interface ResponseBytes {
  status: number;
  route: string;
  /** The Response payload, a view into the chunk it came in. */
  payload: Buffer;
}

export function readResponseBytes(payload: Buffer): ResponseBytes {
  return { status: payload.readUInt16LE(4), route: readEnvelopeLabel(payload), payload };
}
