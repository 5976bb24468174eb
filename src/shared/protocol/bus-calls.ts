/**
 * A bus call from an actor thread to another API of its host, and its answer: thread → router
 * (Call, CallResult). A call sent straight to a peer travels as a request instead (requests.ts).
 */
import { envelopeHead, FRAME_HEADER, FrameType, readEnvelope, u32Head } from './frames.js';
import { encodeResponse, type ResponseMeta } from './requests.js';

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
  /** The bus calls the callee and what it calls may make in all: its lease (engine/call-budget.ts). */
  budget: number;
}

/**
 * The answer to a bus call as the calling directive gets it: status, headers and the body as bytes
 * (a view into the frame it came in, which it keeps alive while kept). Narrower than an
 * OutgoingResponse: no string body, no file (a bus answer reads its file), no route label.
 */
export interface BusResponse {
  status: number;
  headers: string[];
  body: Buffer;
  /** What the callee did not use of the call's lease (0 when the answer does not say: all spent). */
  budgetLeft: number;
}

type CallMeta = [string, string, string, string[], number, number];

/** The head of a Call frame; `call.body` follows it as it is: `writer.writeFrame(head, call.body)`. */
export function encodeCallHead(number: number, call: BusCall): Buffer {
  const meta: CallMeta = [call.verb, call.path, call.rawQuery, call.rawHeaders, call.hop, call.budget];
  return envelopeHead(FrameType.Call, number, 0, meta, call.body === null ? 0 : call.body.length);
}

/** The call in a Call frame; its body is a view into the frame (the router sends it on as it is). */
export function decodeCall(payload: Buffer): { number: number; call: BusCall } {
  const envelope = readEnvelope(payload);
  const [verb, path, rawQuery, rawHeaders, hop, budget] = envelope.meta as CallMeta;
  const body = envelope.body.length === 0 ? null : envelope.body;
  return { number: envelope.number, call: { verb, path, rawQuery, rawHeaders, hop, budget, body } };
}

/**
 * How the router answers a call: with a Response payload. Usually the target thread's, exactly as
 * it came (the router read its status and route, nothing else); for an answer the router gives
 * itself (404, 508, timeout, cell died…), one it encoded (answerPayload).
 */
export type CallReply = (responsePayload: Buffer) => void;

/**
 * The head of a CallResult frame: [u32 call number], then the Response payload (`responsePayloadSize`
 * bytes) follows as it is: `writer.writeFrame(head, responsePayload)`. The router neither decodes
 * the target's answer nor copies it.
 */
export function callResultHead(number: number, responsePayloadSize: number): Buffer {
  return u32Head(FrameType.CallResult, number, responsePayloadSize);
}

/** A Response payload for an answer the router gives itself (not the target's). */
export function answerPayload(response: BusResponse): Buffer {
  return encodeResponse(0, response).subarray(FRAME_HEADER);
}

/**
 * The answer in a CallResult frame: status, headers and body of the Response payload after the call
 * number (its request number and route are not the caller's business). The body is a view into the
 * frame: not copied.
 */
export function decodeCallResult(payload: Buffer): { number: number; response: BusResponse } {
  const envelope = readEnvelope(payload, 4);
  const [headers, , budgetLeft] = envelope.meta as ResponseMeta;
  return {
    number: payload.readUInt32LE(0),
    response: { status: envelope.small, headers, body: envelope.body, budgetLeft: budgetLeft ?? 0 },
  };
}
