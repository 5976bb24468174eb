/** A job to store, thread → router (Enqueue), and the router's answer (EnqueueResult). */
import { envelopeFrame, FrameType, readEnvelope } from './frames.js';

/** A job to store, from an actor thread (ForTheWorker). */
export interface EnqueueRequest {
  payload: string;
  delayMs: number;
  /** The API's job quotas as its api.yaml sets them (the router caps them by the instance's). */
  quota: JobQuota;
}

/** A refusal carries the error's code, and `retryAfter` (seconds) when a later try may pass. */
export type EnqueueOutcome =
  { ok: true; id: string } | { ok: false; status: number; error: string; code?: string; retryAfter?: number };

export function encodeEnqueue(number: number, request: EnqueueRequest): Buffer {
  const { delayMs, quota } = request;
  return envelopeFrame(
    FrameType.Enqueue,
    number,
    0,
    [delayMs, quota.maxPayloadBytes, quota.maxQueued, quota.maxQueuedBytes ?? null],
    Buffer.from(request.payload),
  );
}

export function decodeEnqueue(payload: Buffer): { number: number; request: EnqueueRequest } {
  const envelope = readEnvelope(payload);
  const [delayMs, maxPayloadBytes, maxQueued, maxQueuedBytes] = envelope.meta as [
    number,
    number,
    number,
    number | null | undefined,
  ];
  const quota = { maxPayloadBytes, maxQueued, ...(typeof maxQueuedBytes === 'number' ? { maxQueuedBytes } : {}) };
  return { number: envelope.number, request: { delayMs, quota, payload: envelope.body.toString('utf8') } };
}

export function encodeEnqueueResult(number: number, outcome: EnqueueOutcome): Buffer {
  return envelopeFrame(FrameType.EnqueueResult, number, outcome.ok ? 0 : 1, outcome, null);
}

export function decodeEnqueueResult(payload: Buffer): { number: number; outcome: EnqueueOutcome } {
  const envelope = readEnvelope(payload);
  return { number: envelope.number, outcome: envelope.meta as EnqueueOutcome };
}

/** What one API may put in the queue (its quotas, src/shared/quotas/api-quotas.ts). */
export interface JobQuota {
  /** Largest payload, UTF-8 bytes: a larger one is refused (413). */
  maxPayloadBytes: number;
  /** Jobs of the API queued and not finished (waiting, delayed, active): at this many, a new one is refused (503). */
  maxQueued: number;
  /**
   * Payload bytes (UTF-8) of the API's jobs queued and not finished, the new one included: past it,
   * the new one is refused (503). Held by the embedded queue; the BullMQ queue bounds these bytes by
   * maxQueued × maxPayloadBytes only.
   */
  maxQueuedBytes?: number;
}
