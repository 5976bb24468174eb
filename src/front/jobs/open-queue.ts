/**
 * The job queue of the instance (SPEC §8): BullMQ when a Redis URL is set, else the embedded
 * SQLite queue in the data dir. Only the router process starts consuming (see each backend).
 */
import { EmbeddedJobQueue } from './embedded-queue.js';
import type { JobQueue } from './job-queue.js';

export interface OpenJobQueueOptions {
  /** The instance's data directory; the embedded queue lives in `<dataDir>/.anvil/jobs.sqlite`. */
  dataDir: string;
  /** When set, BullMQ on this Redis (several instances may share it). */
  redisUrl?: string;
  /**
   * Redis key prefix in the key-value store's form (`anvil:`, the default); trailing colons are
   * dropped for BullMQ, which adds its own: the keys are `anvil:anvil-jobs:…`.
   */
  prefix?: string;
  /** BullMQ queue name, default `anvil-jobs`. */
  queueName?: string;
  /** Errors of the background work (polls, connections); default: ignored. */
  onError?: (error: Error) => void;
}

/** Rejects with ANVIL_ERR_JOBS_UNAVAILABLE (503) when Redis cannot be reached. */
export async function openJobQueue(options: OpenJobQueueOptions): Promise<JobQueue> {
  if (options.redisUrl) {
    // BullMQ (and its Redis client) is loaded only then: ~220 ms of a start without REDIS_URL.
    const { BullJobQueue } = await import('./bullmq-queue.js');
    return BullJobQueue.open({
      redisUrl: options.redisUrl,
      prefix: options.prefix === undefined ? undefined : options.prefix.replace(/:+$/, ''),
      queueName: options.queueName,
      onError: options.onError,
    });
  }
  return EmbeddedJobQueue.open({ dataDir: options.dataDir, onError: options.onError });
}
