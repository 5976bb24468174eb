/**
 * What a job is in BullMQ: a BullMQ job with our id (`j-…`, as the embedded queue), name = the API
 * and data `{ api, payload }`; kept on failure (`removeOnFail: false`), the newest 1000 completed
 * kept IN ALL (BullMQ counts per queue, not per API as the embedded queue does). And how one reads
 * as a JobInfo.
 *
 * Runs started (`attempts`) = attemptsMade (finished runs) + stalledCounter (runs lost with their
 * consumer) + 1 while active. A lost run counts toward the retries, as in the embedded queue.
 * `requeueFailed` resets both counters.
 */
import type { Job, JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { BULL_QUEUE_DEFAULTS } from './bullmq-options.js';
import { retriedByWorker } from './bullmq-retry-policy.js';
import type { JobInfo, JobState } from './job-queue.js';

export interface JobData {
  api: string;
  payload: string;
}

export type AnvilJob = Job<JobData, void, string>;

export type AnvilQueue = Queue<JobData, void, string>;

/** BullMQ's states and lists, as ours. */
export const STATE_OF: Record<string, JobState | undefined> = {
  waiting: 'waiting',
  wait: 'waiting',
  paused: 'waiting',
  prioritized: 'waiting',
  'waiting-children': 'waiting',
  delayed: 'delayed',
  active: 'active',
  completed: 'completed',
  failed: 'failed',
};

export function newJobOptions(id: string, delayMs: number): JobsOptions {
  return {
    jobId: id,
    delay: Math.ceil(delayMs),
    ...retriedByWorker(),
    removeOnComplete: { count: BULL_QUEUE_DEFAULTS.keepCompleted },
    removeOnFail: false,
    stackTraceLimit: 1,
  };
}

export function toJobInfo(job: AnvilJob, state: JobState, runAt: number): JobInfo {
  return {
    id: String(job.id),
    api: job.data.api,
    state,
    payload: job.data.payload,
    attempts: (job.attemptsMade ?? 0) + (job.stalledCounter ?? 0) + (state === 'active' ? 1 : 0),
    error: job.failedReason ? job.failedReason : null,
    createdAt: job.timestamp,
    runAt,
    finishedAt: job.finishedOn ?? null,
  };
}

/** Reads of a job that keeps changing state before one is taken as it stands. */
const CONSISTENT_READ_TRIES = 5;

/**
 * The job and its state, read so that they agree: the job's fields and its state are two reads,
 * and a run that ends between them would pair the last run's counters with the new state (a
 * failed job shown with one attempt too few). The state is read on both sides of the fields.
 */
async function readJobAndState(queue: AnvilQueue, id: string): Promise<{ job: AnvilJob; state: string } | null> {
  for (let tries = 1; ; tries++) {
    const before = await queue.getJobState(id);
    const job = (await queue.getJob(id)) as AnvilJob | undefined;
    if (!job) return null;
    const after = await job.getState();
    if (before === after || tries >= CONSISTENT_READ_TRIES) return { job, state: after };
  }
}

/** The job as a JobInfo; null when there is none (or in a state we do not report). */
export async function readJobInfo(queue: AnvilQueue, redis: Redis, id: string): Promise<JobInfo | null> {
  const read = await readJobAndState(queue, id);
  if (!read) return null;
  const { job } = read;
  const state = STATE_OF[read.state];
  if (!state) return null;
  let runAt = Math.min(Date.now(), job.timestamp + (job.delay ?? 0));
  if (state === 'delayed') {
    const score = await redis.zscore(queue.toKey('delayed'), id);
    runAt = score === null ? job.timestamp + (job.delay ?? 0) : Math.floor(Number(score) / 0x1000);
  } else if (state !== 'waiting') {
    runAt = job.processedOn ?? job.timestamp;
  }
  return toJobInfo(job, state, runAt);
}
