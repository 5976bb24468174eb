/**
 * The BullMQ Worker of the queue and its processor: the per-API limit, the run, the retry
 * decision (see bullmq-retry-policy.ts), and close() giving up on runs.
 *
 * Leases: `lockDuration` = leaseMs. BullMQ renews the lock of a live run (every leaseMs/2), so a
 * long run is not run twice; when the instance dies the lock runs out and a stalled check (every
 * leaseMs/2, capped at 30 s; any instance's worker does it) puts the job back to waiting: it runs
 * again (at least once). Stalls never fail a job (maxStalledCount is practically unlimited);
 * they count as runs for the retry budget.
 */
import { DelayedError, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { toJobInfo, type AnvilJob, type AnvilQueue, type JobData } from './bullmq-jobs.js';
import { BULL_QUEUE_DEFAULTS } from './bullmq-options.js';
import type { PendingJobSets } from './bullmq-pending-sets.js';
import { PerApiLimit } from './bullmq-per-api-limit.js';
import { backoffSettings } from './bullmq-retry-policy.js';
import { retryDelay, runSafely } from './job-checks.js';
import type { JobInfo, QueueConsumerOptions, RunResult } from './job-queue.js';
import { waitForRuns } from './runs-in-flight.js';

const STALLS_CAP = 1_000_000;
const ABANDONED = Symbol('abandoned');

export interface BullWorkerSetup {
  queue: AnvilQueue;
  queueName: string;
  prefix: string;
  /** The worker's own connection (blocking commands). */
  connection: Redis;
  /** The queue's connection, for the per-API run slots' scripts. */
  commands: Redis;
  pending: PendingJobSets;
  /** Errors of the background work. */
  report: (error: unknown) => void;
}

export class BullJobWorker {
  private readonly worker: Worker<JobData, void, string>;
  private readonly pending: PendingJobSets;
  private readonly report: (error: unknown) => void;
  private readonly limit: PerApiLimit;
  private readonly inFlight = new Set<Promise<RunResult>>();
  /** Jobs fetched whose run slot is being taken (a Redis call): close() waits for them to start. */
  private readonly entering = new Set<Promise<void>>();
  private abandon: () => void = () => {};
  private readonly abandoned: Promise<typeof ABANDONED>;

  /** Starts fetching at once. `policy`: checked options. */
  constructor(setup: BullWorkerSetup, run: (job: JobInfo) => Promise<RunResult>, policy: QueueConsumerOptions) {
    this.pending = setup.pending;
    this.report = setup.report;
    this.limit = new PerApiLimit(setup.queue, setup.commands, policy.perApi, policy.leaseMs, setup.report);
    this.abandoned = new Promise((resolve) => {
      this.abandon = () => resolve(ABANDONED);
    });
    this.worker = new Worker<JobData, void, string>(
      setup.queueName,
      (job, token) => this.process(job, token, run, policy),
      {
        connection: setup.connection,
        prefix: setup.prefix,
        concurrency: policy.concurrency,
        lockDuration: policy.leaseMs,
        stalledInterval: Math.min(
          BULL_QUEUE_DEFAULTS.maxStalledIntervalMs,
          Math.max(50, Math.floor(policy.leaseMs / 2)),
        ),
        maxStalledCount: STALLS_CAP,
        settings: backoffSettings(policy),
      },
    );
    this.worker.on('error', (error: Error) => this.report(error));
  }

  /** Stops fetching; waits for the runs in flight up to `timeoutMs`, then abandons them. */
  async close(timeoutMs: number): Promise<void> {
    this.limit.stop();
    // Stops fetching at once, then waits for the processors (which wait for the runs).
    const closingWorker = this.worker.close();
    const deadline = Date.now() + timeoutMs;
    if (this.entering.size > 0)
      await waitForRuns(
        [...this.entering].map((entering) => entering.catch(() => {})),
        timeoutMs,
      );
    if (this.inFlight.size > 0) await waitForRuns([...this.inFlight], Math.max(0, deadline - Date.now()));
    this.abandon();
    await closingWorker.catch((error: unknown) => this.report(error));
  }

  private async process(
    job: AnvilJob,
    token: string | undefined,
    run: (job: JobInfo) => Promise<RunResult>,
    policy: QueueConsumerOptions,
  ): Promise<void> {
    const { api } = job.data;
    const entering = this.limit.enter(job, token);
    this.entering.add(entering);
    try {
      await entering;
    } finally {
      this.entering.delete(entering);
    }
    const info = toJobInfo(job, 'active', job.processedOn ?? Date.now());
    const outcome = runSafely(run, info);
    this.inFlight.add(outcome);
    let result: RunResult | typeof ABANDONED;
    try {
      result = await Promise.race([outcome, this.abandoned]);
    } finally {
      this.inFlight.delete(outcome);
      this.limit.leave(job, result! !== ABANDONED);
    }
    // close() gave up on this run: leave the job active without renewing its lock, as a crash
    // would. Its lock runs out and it runs again (a DelayedError makes BullMQ leave it as it is).
    if (result === ABANDONED) throw new DelayedError('abandoned by close()');
    if (result.ok) {
      await this.pending.release(api, [info.id]);
      return;
    }
    if (retryDelay(info.attempts, policy) === null) {
      await this.pending.release(api, [info.id]);
      throw new UnrecoverableError(result.error);
    }
    throw new Error(result.error);
  }
}
