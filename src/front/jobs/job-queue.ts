/**
 * The durable job queue of SPEC §8, behind one interface: embedded (SQLite in the data dir) or
 * BullMQ (Redis). Only the router process produces and consumes: an actor thread asks the router
 * to enqueue, and the router hands due jobs to the API's actor like requests.
 *
 * Delivery is at least once: a job whose run was interrupted (the instance crashed, the lease ran
 * out) runs again.
 */

import type { JobQuota } from '../../shared/protocol/enqueue.js';

export type { JobQuota };

export type JobState = 'waiting' | 'delayed' | 'active' | 'completed' | 'failed';

export interface NewJob {
  /** The API the job belongs to: `<host>/<env>/<key>`. */
  api: string;
  /** Opaque to the queue (the captured memory and message, JSON). */
  payload: string;
  /** Runs no earlier than this many ms from now. */
  delayMs: number;
}

export interface JobInfo {
  id: string;
  api: string;
  state: JobState;
  payload: string;
  /** Runs started so far. */
  attempts: number;
  /** The error of the last failed run, if any. */
  error: string | null;
  createdAt: number;
  /** When it may run next (waiting/delayed), ms since epoch; active/completed/failed: when its last run started. */
  runAt: number;
  finishedAt: number | null;
}

/** A type, not an interface, so that it is assignable to `Record<string, number>` (metrics). */
export type QueueCounts = {
  waiting: number;
  delayed: number;
  active: number;
  completed: number;
  failed: number;
};

/** What a run reports back: retry (≥ 500, a thrown error) or not. */
export type RunResult = { ok: true } | { ok: false; error: string };

export interface QueueConsumerOptions {
  /** Runs in flight at once, in all. */
  concurrency: number;
  /** Runs in flight at once per API (fairness: a poison API cannot take every slot). */
  perApi: number;
  /** Runs after the first one, on a failure (SPEC §8: 3). */
  retries: number;
  /** Backoff of the first retry; doubles each time. */
  backoffMs: number;
  /**
   * A run whose consumer stopped renewing its lease for this long (the instance died, or its event
   * loop stalled that long) is considered lost and the job runs again (at least once). The lease
   * of a live run is renewed, so a long run is not run twice: bounding a run's time is the
   * caller's business (the router's request timeout). A lost run counts as a run for `retries`.
   */
  leaseMs: number;
}

export interface JobQueue {
  /**
   * Durable once the promise resolves: the job survives a crash from then on. With a quota, a job
   * over it is refused with a QuotaError (ANVIL_ERR_QUOTA_JOB_PAYLOAD 413,
   * ANVIL_ERR_QUOTA_QUEUED_JOBS 503); the count and the add are one step, so concurrent adds never
   * pass the limit together.
   */
  add(job: NewJob, quota?: JobQuota): Promise<string>;
  /** Starts consuming: `run` is called for each due job, at most `concurrency` at once. */
  start(run: (job: JobInfo) => Promise<RunResult>, options: QueueConsumerOptions): void;
  get(id: string): Promise<JobInfo | null>;
  counts(api?: string): Promise<QueueCounts>;
  /** Removes waiting, delayed, completed and failed jobs (of one API, or all); returns how many. */
  flush(api?: string): Promise<number>;
  /** Failed jobs go back to waiting with their attempts reset; returns how many. */
  requeueFailed(api?: string): Promise<number>;
  /** Stops consuming; waits for runs in flight (up to `timeoutMs`), then closes. */
  close(timeoutMs?: number): Promise<void>;
}
