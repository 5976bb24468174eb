/**
 * A bus call from an actor thread to another API of its host, and its answer: thread → router
 * (Call, CallResult). A call sent straight to a peer travels as a request instead (requests.ts).
 */
import { envelopeFrame, FrameType, readEnvelope } from './frames.js';

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

/**
 * The answer to a bus call as the calling directive gets it: the body is always bytes (copied out
 * of the socket chunk). Narrower than an OutgoingResponse (a body that may be a string or a file, a
 * route label): a CallResult frame carries status, headers and body only.
 */
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

/** Status, headers and body of the answer; a file or a route label is not sent. */
export function encodeCallResult(number: number, response: { status: number; headers: string[]; body: Buffer | string | null }): Buffer {
  return envelopeFrame(FrameType.CallResult, number, response.status, response.headers, response.body);
}

export function decodeCallResult(payload: Buffer): { number: number; response: BusResponse } {
  const envelope = readEnvelope(payload);
  return { number: envelope.number, response: { status: envelope.small, headers: envelope.meta as string[], body: Buffer.from(envelope.body) } };
}
