/**
 * Retry policy: `retries` and `backoffMs` come with `start()`, not with `add()`, so the worker
 * decides at failure time, exactly as the embedded queue does: jobs carry a very large `attempts`
 * and the backoff type `anvil`, whose delay the worker computes (backoffMs·2^(runs-1)); when the
 * runs are used up the processor throws an UnrecoverableError, and BullMQ fails the job with the
 * run's error as failedReason. Changing the policy thus applies to the jobs already queued too.
 * The runs counted include those lost with their consumer (see bullmq-jobs.ts).
 */
import type { Job, WorkerOptions } from 'bullmq';
import { retryDelay } from './job-checks.js';
import type { QueueConsumerOptions } from './job-queue.js';

/** "Unlimited" attempts: the worker's policy (UnrecoverableError) ends a job, never this count. */
const ATTEMPTS_CAP = 2 ** 31 - 1;
const BACKOFF_TYPE = 'anvil';

/** The options of a new job that leave its retries to the worker. */
export function retriedByWorker(): { attempts: number; backoff: { type: string } } {
  return { attempts: ATTEMPTS_CAP, backoff: { type: BACKOFF_TYPE } };
}

/** The worker's settings that compute the delay of the backoff type `anvil`. */
export function backoffSettings(
  policy: Pick<QueueConsumerOptions, 'backoffMs'>,
): NonNullable<WorkerOptions['settings']> {
  return {
    // attemptsMade here already counts the run that just failed.
    backoffStrategy: (attemptsMade, _type, _error, job) =>
      retryDelay(attemptsMade + ((job as Job | undefined)?.stalledCounter ?? 0), {
        retries: Number.MAX_SAFE_INTEGER,
        backoffMs: policy.backoffMs,
      }) ?? 0,
  };
}
