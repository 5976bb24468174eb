/**
 * Per-API limit (`perApi`): BullMQ OSS has no group limits, so the processor enforces it: when
 * the job's API already has `perApi` runs in flight IN THIS WORKER, the job goes back to delayed
 * (`job.moveToDelayed` + `DelayedError`, which counts no attempt) and the worker fetches the next
 * one, so another API's job is not stuck behind a busy API. The deferral is 100 ms times the
 * number of that API's jobs already deferred (capped at 5 s): a backlog of N jobs of one API costs
 * about 10 deferrals a second, not 10·N; and when a run of the API ends, its longest-deferred job
 * is promoted at once, so the API's slot does not idle. Such a job shows as `delayed` meanwhile. The limit holds
 * per instance: N instances on one Redis allow N·perApi runs of an API.
 */
import { DelayedError } from 'bullmq';
import type { AnvilJob, AnvilQueue } from './bullmq-jobs.js';
import { BULL_QUEUE_DEFAULTS } from './bullmq-options.js';
import { RunsPerApi } from './runs-in-flight.js';

export class PerApiLimit {
  private readonly runs = new RunsPerApi();
  /** Per API: the jobs this worker deferred for perApi, and until when. */
  private readonly deferred = new Map<string, Map<string, number>>();
  private stopped = false;

  constructor(
    private readonly queue: AnvilQueue,
    private readonly perApi: number,
  ) {}

  /** The job's API has `perApi` runs in flight here. */
  isFull(api: string): boolean {
    return this.runs.of(api) >= this.perApi;
  }

  /** Moves the job back to delayed, then throws the DelayedError that tells BullMQ so. */
  async defer(job: AnvilJob, token: string | undefined): Promise<never> {
    const { api } = job.data;
    await job.moveToDelayed(this.deferUntil(api, String(job.id)), token);
    throw new DelayedError(`deferred: ${this.perApi} runs of ${api} in flight`);
  }

  /** A run of the job starts: it counts for its API, and is no longer deferred. */
  enter(job: AnvilJob): void {
    const { api } = job.data;
    const deferred = this.deferred.get(api);
    if (deferred?.delete(String(job.id)) && deferred.size === 0) this.deferred.delete(api);
    this.runs.started(api);
  }

  /** A run of `api` ended; unless `promote` is false, its longest-deferred job need not wait out its delay. */
  leave(api: string, promote: boolean): void {
    this.runs.ended(api);
    if (promote) void this.promoteDeferred(api);
  }

  /** The worker is closing: deferred jobs are no longer promoted. */
  stop(): void {
    this.stopped = true;
  }

  private async promoteDeferred(api: string): Promise<void> {
    const jobs = this.deferred.get(api);
    if (!jobs || this.stopped) return;
    let next: string | undefined;
    let first = Infinity;
    for (const [id, until] of jobs) {
      if (until < first) [next, first] = [id, until];
    }
    if (next === undefined) return;
    jobs.delete(next);
    if (jobs.size === 0) this.deferred.delete(api);
    try {
      await (await this.queue.getJob(next))?.promote();
    } catch {
      // no longer delayed (already back, flushed): nothing to do
    }
  }

  /** When a job deferred for its API's limit is due again (see the header). */
  private deferUntil(api: string, id: string): number {
    const now = Date.now();
    let jobs = this.deferred.get(api);
    if (!jobs) this.deferred.set(api, (jobs = new Map()));
    jobs.delete(id);
    // Forget deferrals long past (the job was flushed, or another instance took it).
    for (const [other, until] of jobs) if (until < now - 1000) jobs.delete(other);
    const until = now + Math.min(BULL_QUEUE_DEFAULTS.perApiMaxDeferMs, BULL_QUEUE_DEFAULTS.perApiDeferMs * (jobs.size + 1));
    jobs.set(id, until);
    return until;
  }
}
