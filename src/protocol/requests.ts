/**
 * The request an actor thread runs and the response it sends back: what crosses the router ↔
 * thread socket (and a peer's) on the request path.
 */
import type { FileRef } from '../static/file-ref.js';

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
  viaBus: boolean;
  receivedAt: number;
  /** Set when this is a queued job (SPEC §8): its Continuation, as JSON. `id` is the job id. */
  job?: string;
}

/** What the engine hands back: the message as a response. */
export interface OutgoingResponse {
  status: number;
  /** Flat [name, value, …]; a multi-valued header repeats its name. */
  headers: string[];
  body: Buffer | string | null;
  /** Instead of `body` (null then): a file the router streams to the client (see static/file-ref.ts). */
  file?: FileRef;
  /** The endpoint that answered (`get /users/{id}`): a metrics label, never sent to the client. */
  route?: string;
}
