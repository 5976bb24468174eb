import type { MessageSnapshot } from './message.js';

/**
 * The rest of a request, frozen when a directive queues it (ForTheWorker, SPEC §8): which endpoint,
 * after which entry it resumes, and the memory and message as they were. Plain JSON: it is stored
 * in the job queue and may run after a restart, in the release current by then.
 */
export interface Continuation {
  format: 1;
  /** `<verb> <path>` of the endpoint definition. */
  endpoint: string;
  /** The key of the entry that queued the rest (`endpoint:Queue`): the job starts after it. */
  after: string;
  memory: Record<string, unknown>;
  message: MessageSnapshot;
  pathParams: Record<string, string>;
  ip: string;
}
