/**
 * A job's record in its API's key space (`job:<id>`): `{"message":"queued","id":…}` once
 * ForTheWorker queued it with `identifier`, then whatever WriteToJob wrote; ReadJob reads it.
 *
 * How long it is kept (the original kept it 600 s from the queuing, so a job delayed longer lost it
 * before it ran): RETENTION after the job is due for the queued record, RETENTION after each
 * WriteToJob for the others; a job writes its result during its run, so the result is kept about
 * RETENTION after the job finished.
 */
import { jobRecordKey } from './api-keys.js';
import type { KvStore } from '../../engine/kv-store.js';

export const JOB_RECORD_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * The queued record, unless the job (already run, on another thread) wrote its own: the queue hands
 * a job out as soon as it is stored, which may be before this write. True when it was written.
 */
export function recordQueued(kv: KvStore, jobId: string, delayMs: number): Promise<boolean> {
  return kv.setIfAbsent(
    jobRecordKey(jobId),
    JSON.stringify({ message: 'queued', id: jobId }),
    delayMs + JOB_RECORD_RETENTION_MS,
  );
}

export function writeJobRecord(kv: KvStore, jobId: string, value: unknown): Promise<void> {
  return kv.set(jobRecordKey(jobId), JSON.stringify(value), JOB_RECORD_RETENTION_MS);
}

/** The record, or null when the API has none under this id (never queued with identifier, or expired). */
export async function readJobRecord(kv: KvStore, jobId: string): Promise<unknown> {
  const text = await kv.get(jobRecordKey(jobId));
  return text === null ? null : (JSON.parse(text) as unknown);
}
