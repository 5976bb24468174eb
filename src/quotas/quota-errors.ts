import { AnvilError, QUOTA_CODE_PREFIX } from '../errors.js';
import { QUOTA_NAMES } from './api-quotas.js';

/**
 * An API ran into one of its quotas on shared stores. Its message is written for the API's
 * clients (it names the quota and the setting that moves it, and reveals nothing of the host), so
 * it is shown whatever the status (see `publicMessage`).
 */
export class QuotaError extends AnvilError {
  constructor(
    code: string,
    status: number,
    message: string,
    /** Counted under this name in `anvil_quota_refusals_total{quota}`. */
    readonly quota: string,
    /** Sent as `retry-after` when set: the refusal may pass later. */
    readonly retryAfterSeconds?: number,
  ) {
    super(code, status, message);
  }
}

/** Seconds a client is told to wait when the API's job queue is full. */
export const QUEUE_FULL_RETRY_AFTER_S = 5;

export const QuotaErrors = {
  jobPayload: (bytes: number, limit: number) =>
    new QuotaError(
      'ANVIL_ERR_QUOTA_JOB_PAYLOAD',
      413,
      `the job is ${bytes} bytes, over this API's job payload quota of ${limit} bytes (api.yaml limits.jobPayloadKb, at most --max-job-payload)`,
      QUOTA_NAMES.jobPayload,
    ),
  queuedJobs: (limit: number) =>
    new QuotaError(
      'ANVIL_ERR_QUOTA_QUEUED_JOBS',
      503,
      `this API already has ${limit} jobs queued and not finished, its quota (api.yaml limits.queuedJobs, at most --max-queued-jobs); retry later`,
      QUOTA_NAMES.queuedJobs,
      QUEUE_FULL_RETRY_AFTER_S,
    ),
  kvBytes: (wouldUse: number, limit: number) =>
    new QuotaError(
      'ANVIL_ERR_QUOTA_KV_BYTES',
      507,
      `this write would make the API's keys and values in the key-value store ${wouldUse} bytes, over its quota of ${limit} bytes (api.yaml limits.kvKb, at most --max-kv-bytes)`,
      QUOTA_NAMES.kvBytes,
    ),
} as const;

/** True for the codes of QuotaErrors, also once an error crossed a thread as code and message. */
export function isQuotaCode(code: string): boolean {
  return code.startsWith(QUOTA_CODE_PREFIX);
}
