/**
 * What both queues share: argument checks, job ids, the retry policy and the normalisation of what
 * a run reports, so that the embedded and the BullMQ queue decide alike.
 */
import { randomBytes } from 'node:crypto';
import { Errors } from '../../shared/errors.js';
import type { JobQuota, NewJob, QueueConsumerOptions, RunResult } from './job-queue.js';

/** Defaults for a caller without opinions (SPEC §8: 3 retries). */
export const JOB_QUEUE_DEFAULTS = {
  /** How long `close()` waits for runs in flight: the router's request timeout. */
  closeTimeoutMs: 30_000,
} as const;

/** The largest delay accepted: about 10 years, far inside both stores' integer ranges. */
const MAX_DELAY_MS = 10 * 365 * 24 * 3600 * 1000;
const MAX_API_BYTES = 1024;

export function checkNewJob(job: NewJob): void {
  if (job === null || typeof job !== 'object') throw Errors.jobsBadArgument('the job must be an object');
  if (typeof job.api !== 'string' || job.api === '') throw Errors.jobsBadArgument('api must be a non-empty string');
  if (Buffer.byteLength(job.api) > MAX_API_BYTES)
    throw Errors.jobsBadArgument(`api must be at most ${MAX_API_BYTES} bytes`);
  if (typeof job.payload !== 'string') throw Errors.jobsBadArgument('payload must be a string');
  if (
    typeof job.delayMs !== 'number' ||
    !Number.isFinite(job.delayMs) ||
    job.delayMs < 0 ||
    job.delayMs > MAX_DELAY_MS
  ) {
    throw Errors.jobsBadArgument(
      `delayMs must be a number of ms between 0 and ${MAX_DELAY_MS}, got ${String(job.delayMs)}`,
    );
  }
}

/** Checks the quota's own values, and the payload against it (the queue counts the queued jobs). */
export function checkPayloadQuota(job: NewJob, quota: JobQuota | undefined): void {
  if (quota === undefined) return;
  if (quota === null || typeof quota !== 'object') throw Errors.jobsBadArgument('the quota must be an object');
  integerAtLeast('maxPayloadBytes', quota.maxPayloadBytes, 1);
  integerAtLeast('maxQueued', quota.maxQueued, 1);
  if (quota.maxQueuedBytes !== undefined) integerAtLeast('maxQueuedBytes', quota.maxQueuedBytes, 1);
  // A UTF-8 byte is at least one UTF-16 unit, at most three: count only when it may matter.
  if (job.payload.length * 3 <= quota.maxPayloadBytes) return;
  const bytes = Buffer.byteLength(job.payload);
  if (bytes > quota.maxPayloadBytes) throw Errors.quotaJobPayload(bytes, quota.maxPayloadBytes);
}

export function checkJobId(id: string): void {
  if (typeof id !== 'string') throw Errors.jobsBadArgument('the job id must be a string');
}

export function checkApiFilter(api: string | undefined): void {
  if (api !== undefined && (typeof api !== 'string' || api === ''))
    throw Errors.jobsBadArgument('api must be a non-empty string when given');
}

function integerAtLeast(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw Errors.jobsBadArgument(`${name} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}

export function checkConsumerOptions(options: QueueConsumerOptions): QueueConsumerOptions {
  if (options === null || typeof options !== 'object')
    throw Errors.jobsBadArgument('the consumer options must be an object');
  return {
    concurrency: integerAtLeast('concurrency', options.concurrency, 1),
    perApi: integerAtLeast('perApi', options.perApi, 1),
    retries: integerAtLeast('retries', options.retries, 0),
    backoffMs: integerAtLeast('backoffMs', options.backoffMs, 0),
    leaseMs: integerAtLeast('leaseMs', options.leaseMs, 10),
  };
}

/**
 * A new job id: `j-<ms since epoch, base36, 9 digits>-<10 hex>`, e.g. `j-0mbq3v1xk-4f0a9c2e1b`.
 * Ids sort by creation time (to the ms); never an integer and without `:` (BullMQ's rules for
 * custom ids), so both queues use the same form.
 */
export function newJobId(now: number = Date.now()): string {
  return `j-${Math.floor(now).toString(36).padStart(9, '0')}-${randomBytes(5).toString('hex')}`;
}

/**
 * The retry policy, applied when a run fails. `runs` counts the runs started so far, this one
 * included (a run lost with its consumer counts too). Another run is due after
 * `backoffMs * 2^(runs-1)` while `runs <= retries`; else the job is failed.
 */
export function retryDelay(runs: number, options: Pick<QueueConsumerOptions, 'retries' | 'backoffMs'>): number | null {
  if (runs > options.retries) return null;
  return options.backoffMs * 2 ** Math.max(0, runs - 1);
}

/** Anything a run gives back (or throws) as a RunResult. */
export function settleRun(outcome: { value: unknown } | { thrown: unknown }): RunResult {
  if ('thrown' in outcome) {
    const error = outcome.thrown;
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const value = outcome.value as Partial<{ ok: unknown; error: unknown }> | null | undefined;
  if (value !== null && typeof value === 'object' && value.ok === true) return { ok: true };
  const error =
    value !== null && typeof value === 'object' && typeof value.error === 'string' && value.error !== ''
      ? value.error
      : 'the run failed';
  return { ok: false, error };
}

/** Calls `run` and never rejects: a throw (also a synchronous one) is a failed run. */
export async function runSafely<T>(run: (arg: T) => Promise<RunResult>, arg: T): Promise<RunResult> {
  try {
    return settleRun({ value: await run(arg) });
  } catch (thrown) {
    return settleRun({ thrown });
  }
}

/** The URL without its credentials, for messages. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username) parsed.username = '***';
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured Redis';
  }
}
