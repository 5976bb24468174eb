/**
 * Counts, flush and requeue over BullMQ's lists. Per-API counts/flush/requeue list the ids of the
 * relevant states and read each job's name in one pipeline: O(jobs in those states), fine for our
 * sizes (completed are capped at 1000).
 */
import type { JobType } from 'bullmq';
import type { Redis } from 'ioredis';
import { STATE_OF, type AnvilQueue, type JobData } from './bullmq-jobs.js';
import type { PendingJobSets } from './bullmq-pending-sets.js';
import type { QueueCounts } from './job-queue.js';

const ALL_TYPES: JobType[] = [
  'wait',
  'paused',
  'prioritized',
  'waiting-children',
  'delayed',
  'active',
  'completed',
  'failed',
];
const FLUSHED_TYPES: JobType[] = [
  'wait',
  'paused',
  'prioritized',
  'waiting-children',
  'delayed',
  'completed',
  'failed',
];

export class BullJobLists {
  constructor(
    private readonly queue: AnvilQueue,
    private readonly redis: Redis,
    private readonly pending: PendingJobSets,
  ) {}

  async counts(api: string | undefined): Promise<QueueCounts> {
    const counts: QueueCounts = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 };
    if (api === undefined) {
      const raw = await this.queue.getJobCounts(...ALL_TYPES);
      for (const [type, n] of Object.entries(raw)) {
        const state = STATE_OF[type];
        if (state) counts[state] += n;
      }
      return counts;
    }
    for (const type of ALL_TYPES) {
      const state = STATE_OF[type];
      if (state) counts[state] += (await this.idsOf(type, api)).length;
    }
    return counts;
  }

  async flush(api: string | undefined): Promise<number> {
    let removed = 0;
    for (const type of FLUSHED_TYPES) {
      const jobs = await this.jobsOf(type, api);
      // remove() gives 0 for a job that became active meanwhile (locked): it is left alone.
      for (let i = 0; i < jobs.length; i += 100) {
        const chunk = jobs.slice(i, i + 100);
        const results = await Promise.all(chunk.map(([id]) => this.queue.remove(id)));
        removed += results.reduce((sum, n) => sum + n, 0);
        const gone = new Map<string, string[]>();
        chunk.forEach(([id, name], at) => {
          if (results[at] === 1 && name !== null) gone.set(name, [...(gone.get(name) ?? []), id]);
        });
        for (const [name, ids] of gone) await this.pending.release(name, ids);
      }
    }
    return removed;
  }

  async requeueFailed(api: string | undefined): Promise<number> {
    let requeued = 0;
    for (const id of await this.idsOf('failed', api)) {
      const job = await this.queue.getJob(id);
      if (!job) continue;
      // Runs lost with a consumer count as attempts: reset them too (BullMQ's retry does not).
      await this.redis.hdel(this.queue.toKey(id), 'stc');
      try {
        await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        // Requeued by an operator: it counts again, even past the API's quota.
        await this.pending.restore((job.data as JobData).api, id);
        requeued += 1;
      } catch {
        // no longer failed (requeued or removed meanwhile)
      }
    }
    return requeued;
  }

  /** The ids of the jobs of one BullMQ list/set, of one API if given (by the job name). */
  private async idsOf(type: JobType, api: string | undefined): Promise<string[]> {
    if (api === undefined) return this.queue.getRanges([type], 0, -1, true);
    return (await this.jobsOf(type, api)).map(([id]) => id);
  }

  /** [id, name (the API; null when unreadable)] of the jobs of one BullMQ list/set, of one API if given. */
  private async jobsOf(type: JobType, api: string | undefined): Promise<Array<[string, string | null]>> {
    const ids = await this.queue.getRanges([type], 0, -1, true);
    const kept: Array<[string, string | null]> = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const pipeline = this.redis.pipeline();
      for (const id of chunk) pipeline.hget(this.queue.toKey(id), 'name');
      const names = (await pipeline.exec()) ?? [];
      chunk.forEach((id, at) => {
        const [error, name] = names[at] ?? [null, null];
        const known = !error && typeof name === 'string' ? name : null;
        if (api === undefined || known === api) kept.push([id, known]);
      });
    }
    return kept;
  }
}
