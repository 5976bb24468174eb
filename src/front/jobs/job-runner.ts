import { AnvilError, QuotaError } from '../../shared/errors.js';
import type { JobInfo, JobQueue, JobQuota, QueueCounts, RunResult } from './job-queue.js';
import { retryDelay } from './job-checks.js';

import { formatApiId, parseApiId } from '../../shared/protocol/api-id.js';
import type { ActorSpec } from '../../shared/protocol/cell-messages.js';
import type { EnqueueOutcome, EnqueueRequest } from '../../shared/protocol/enqueue.js';
import { readResponse } from '../../shared/protocol/requests.js';
import type { ApiDirectory, ApiEntry } from '../scheduling/api-directory.js';
import type { Dispatcher } from '../scheduling/dispatcher.js';
import type { JobOutcome } from '../meters/operation-meters.js';

export interface JobRunnerOptions {
  /** Jobs running at once in all. */
  concurrency: number;
  /** Retries after the first run (SPEC §8: 3), with exponential backoff from `backoffMs`. */
  retries: number;
  backoffMs: number;
  /** How long a run's lease lasts; a live run renews it, so it runs out only when this instance dies or stalls that long, and the job then runs again (at least once). */
  leaseMs: number;
}

/**
 * Cluster mode: where a job of `api` runs. It calls `runHere` when this instance runs it, or has
 * the API's owner instance run it and resolves to the owner's outcome.
 */
export type PlaceJobRun = (api: ApiEntry, job: JobInfo, runHere: () => Promise<RunResult>) => Promise<RunResult>;

/**
 * Jobs (SPEC §8) in the router: actor threads ask it to store a job (ForTheWorker), and it hands
 * each due job to its API's actor like a request — through the same mailbox, under the same
 * limits — with `$.id` the job id. At most one job per API runs at a time, so a poison job can hold
 * at most one of its API's threads, never starve its requests, and never take other APIs' turns.
 * A run ending with a status >= 500 (or not ending: 504, a dead cell) is retried, then failed.
 */
export class JobRunner {
  constructor(
    private readonly queue: JobQueue,
    private readonly directory: ApiDirectory,
    private readonly dispatcher: Dispatcher,
    /** Told of every job refused by a quota (for `anvil_quota_refusals_total`). */
    private readonly onQuotaRefusal: (caller: ActorSpec, quota: string) => void,
    /** Told how each run ended (for `anvil_job_runs_total` and the operator endpoints). */
    private readonly onOutcome: (host: string, key: string, outcome: JobOutcome) => void = () => {},
    /** The refusal of a public host over its disk total (--max-host-disk), or null. */
    private readonly hostDiskRefusal: (host: string) => QuotaError | null = () => null,
  ) {}

  private retryPolicy = { retries: 3, backoffMs: 1_000 };
  private place: PlaceJobRun | null = null;

  /** Cluster mode: jobs of placed APIs run on their owner (src/front/placement). */
  usePlacement(place: PlaceJobRun): void {
    this.place = place;
  }

  /**
   * Stores a job of `caller` under the API's quotas: what its thread sent (api.yaml), capped by the
   * instance's ceilings in the caller's spec. Never rejects: a refusal is an outcome.
   */
  async enqueue(caller: ActorSpec, request: EnqueueRequest): Promise<EnqueueOutcome> {
    const quota: JobQuota = {
      maxPayloadBytes: capped(request.quota?.maxPayloadBytes, caller.quotas.jobPayloadBytes),
      maxQueued: capped(request.quota?.maxQueued, caller.quotas.queuedJobs),
      maxQueuedBytes: capped(request.quota?.maxQueuedBytes, caller.quotas.queuedJobBytes),
    };
    try {
      const overDisk = this.hostDiskRefusal(caller.host);
      if (overDisk !== null) throw overDisk;
      const id = await this.queue.add(
        { api: formatApiId(caller), payload: request.payload, delayMs: request.delayMs },
        quota,
      );
      return { ok: true, id };
    } catch (error) {
      if (error instanceof QuotaError) {
        this.onQuotaRefusal(caller, error.quota);
        return {
          ok: false,
          status: error.status,
          error: error.message,
          code: error.code,
          retryAfter: error.retryAfterSeconds,
        };
      }
      const status = error instanceof AnvilError ? error.status : 503;
      return { ok: false, status, error: `the job was not stored: ${(error as Error).message}` };
    }
  }

  start(options: JobRunnerOptions): void {
    this.retryPolicy = { retries: options.retries, backoffMs: options.backoffMs };
    this.queue.start((job) => this.runCounted(job), { ...options, perApi: 1 });
  }

  /** Jobs of one API (`<host>/<env>/<key>`) per state. */
  counts(api: string): Promise<QueueCounts> {
    return this.queue.counts(api);
  }

  /** Removes the waiting, delayed, completed and failed jobs of one API; how many. */
  flush(api: string): Promise<number> {
    return this.queue.flush(api);
  }

  /** Puts the failed jobs of one API back to run again; how many. */
  requeueFailed(api: string): Promise<number> {
    return this.queue.requeueFailed(api);
  }

  close(timeoutMs: number): Promise<void> {
    return this.queue.close(timeoutMs);
  }

  /** `job.attempts` counts this run: the queue fails it for good when no retry delay is left. */
  private async runCounted(job: JobInfo): Promise<RunResult> {
    const result = await this.run(job);
    const { host, key } = parseApiId(job.api);
    this.onOutcome(
      host,
      key,
      result.ok ? 'completed' : retryDelay(job.attempts, this.retryPolicy) === null ? 'failed' : 'retried',
    );
    return result;
  }

  private run(job: JobInfo): Promise<RunResult> {
    const api = this.activeApi(job);
    if (typeof api === 'string') return Promise.resolve({ ok: false, error: api });
    const place = this.place;
    return place === null ? this.runOn(api, job) : place(api, job, () => this.runOn(api, job));
  }

  /**
   * On the API's owner: a run another instance's worker took and handed over (that worker holds
   * the job, its lock and its run slot, and settles it with this outcome).
   */
  runHere(job: Pick<JobInfo, 'id' | 'api' | 'payload'>): Promise<RunResult> {
    const api = this.activeApi(job);
    return typeof api === 'string' ? Promise.resolve({ ok: false, error: api }) : this.runOn(api, job);
  }

  /** The job's API, or why it cannot run. */
  private activeApi(job: Pick<JobInfo, 'api'>): ApiEntry | string {
    // The queue keeps the API as the string it was stored with.
    const { host, env, key } = parseApiId(job.api);
    const api = this.directory.api(host, key);
    return api === undefined || !api.record.active || api.host.env !== env
      ? `API ${key} of ${host} (${env}) is not active`
      : api;
  }

  private runOn(api: ApiEntry, job: Pick<JobInfo, 'id' | 'payload'>): Promise<RunResult> {
    return new Promise((resolve) => {
      this.dispatcher.submit(
        api.spec,
        {
          id: job.id,
          verb: 'POST',
          path: '/',
          rawQuery: '',
          rawHeaders: [],
          body: null,
          ip: '',
          hop: 0,
          budget: this.dispatcher.busCallsPerRequest,
          viaBus: false,
          receivedAt: Date.now(),
          job: job.payload,
        },
        readResponse,
        (outcome) => {
          if (!outcome.ok) return resolve({ ok: false, error: `${outcome.error.status} ${outcome.error.message}` });
          const { status, body } = outcome.response;
          if (status < 500) return resolve({ ok: true });
          const text = body.toString('utf8');
          resolve({ ok: false, error: `${status} ${text.slice(0, 500)}` });
        },
      );
    });
  }
}

/** What a thread asked for, never above the instance's ceiling (nor a value that is not a count). */
function capped(asked: number | undefined, ceiling: number): number {
  return typeof asked === 'number' && Number.isSafeInteger(asked) && asked >= 1 ? Math.min(asked, ceiling) : ceiling;
}
