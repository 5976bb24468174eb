import { AnvilError } from '../errors.js';

/**
 * The coded errors of the job queue (ANVIL_ERR_JOBS_…). Misuse by a caller (an empty API, a
 * negative delay, bad consumer options) is a 500; a queue that cannot reach its store (SQLite busy,
 * Redis down) or is closed is a 503, so `ForTheWorker` can answer "retry later" rather than a bug.
 */
export const JobErrors = {
  badArgument: (what: string) => new AnvilError('ANVIL_ERR_JOBS_BAD_ARGUMENT', 500, `job queue: ${what}`),
  unavailable: (detail: string) => new AnvilError('ANVIL_ERR_JOBS_UNAVAILABLE', 503, `job queue unavailable: ${detail}`),
  closed: () => new AnvilError('ANVIL_ERR_JOBS_CLOSED', 503, 'job queue: the queue is closed'),
  alreadyStarted: () => new AnvilError('ANVIL_ERR_JOBS_STARTED', 500, 'job queue: start() was already called on this queue'),
  failed: (detail: string) => new AnvilError('ANVIL_ERR_JOBS_FAILED', 500, `job queue: ${detail}`),
} as const;
