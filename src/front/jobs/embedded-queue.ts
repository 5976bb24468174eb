/**
 * The embedded job queue: one SQLite file, `<dataDir>/.anvil/jobs.sqlite` (WAL, `synchronous=FULL`
 * so that a job whose `add` resolved survives a power cut as well as a crash; busy_timeout 5000).
 *
 * ONE consumer: only the router process calls `start()` on this file. Other connections (the
 * `anvil jobs` commands) may add, read, flush and requeue at any time; the consumer picks their
 * changes up at its next poll. Two consumers on one file would stay correct (claims are atomic and
 * leases are renewed) but `concurrency` and `perApi` would hold per process, not in all.
 *
 * Quota (`add` with a JobQuota): the API's jobs in state waiting or active are counted (and their
 * payload bytes summed) and the job inserted in one IMMEDIATE transaction, so concurrent adds from
 * any connection never pass it.
 *
 * The pieces: the file and its schema (embedded-database.ts), the queries (embedded-statements.ts),
 * rows as jobs (embedded-rows.ts), the consumer with its leases and retries (embedded-consumer.ts).
 */
import type Database from 'better-sqlite3';
import { Errors } from '../../shared/errors.js';
import { EmbeddedConsumer, type QueueLifecycle } from './embedded-consumer.js';
import { openJobsDatabase, sqliteError } from './embedded-database.js';
import { checkEmbeddedOptions, type EmbeddedQueueOptions } from './embedded-options.js';
import { toCounts, toInfo } from './embedded-rows.js';
import type { Statements } from './embedded-statements.js';
import {
  checkApiFilter,
  checkConsumerOptions,
  checkJobId,
  checkNewJob,
  checkPayloadQuota,
  JOB_QUEUE_DEFAULTS,
  newJobId,
} from './job-checks.js';
import type { JobInfo, JobQueue, JobQuota, NewJob, QueueConsumerOptions, QueueCounts, RunResult } from './job-queue.js';

export { EMBEDDED_QUEUE_DEFAULTS, embeddedQueueFile, type EmbeddedQueueOptions } from './embedded-options.js';

export class EmbeddedJobQueue implements JobQueue {
  readonly file: string;
  private readonly db: Database.Database;
  private readonly stmt: Statements;
  private readonly clock: () => number;
  private readonly pollMs: number;
  private readonly keepCompleted: number;
  private readonly onError: (error: Error) => void;
  private consumer: EmbeddedConsumer | undefined;
  private readonly lifecycle: QueueLifecycle = { stopping: false, closed: false };
  private closing: Promise<void> | undefined;

  static open(options: EmbeddedQueueOptions): EmbeddedJobQueue {
    const { dataDir, pollMs, keepCompleted } = checkEmbeddedOptions(options);
    const { file, db, stmt } = openJobsDatabase(dataDir);
    return new EmbeddedJobQueue(file, db, stmt, options, pollMs, keepCompleted);
  }

  private constructor(
    file: string,
    db: Database.Database,
    stmt: Statements,
    options: EmbeddedQueueOptions,
    pollMs: number,
    keepCompleted: number,
  ) {
    this.file = file;
    this.db = db;
    this.stmt = stmt;
    this.clock = options.now ?? Date.now;
    this.pollMs = pollMs;
    this.keepCompleted = keepCompleted;
    this.onError = options.onError ?? (() => {});
  }

  async add(job: NewJob, quota?: JobQuota): Promise<string> {
    checkNewJob(job);
    checkPayloadQuota(job, quota);
    const now = this.now();
    const id = newJobId(now);
    const insert = () =>
      this.stmt.insert.run({ id, api: job.api, payload: job.payload, now, runAt: now + Math.ceil(job.delayMs) });
    if (quota === undefined) this.sql(insert);
    else {
      // IMMEDIATE: the count and the insert hold the write lock together, across connections.
      const counted = this.db.transaction(() => {
        const queued = this.stmt.queuedOfApi.get({ api: job.api })!;
        if (queued.n >= quota.maxQueued) throw Errors.quotaQueuedJobs(quota.maxQueued);
        if (quota.maxQueuedBytes !== undefined) {
          const after = queued.bytes + Buffer.byteLength(job.payload);
          if (after > quota.maxQueuedBytes) throw Errors.quotaQueuedJobBytes(after, quota.maxQueuedBytes);
        }
        insert();
      });
      this.sql(() => counted.immediate());
    }
    this.consumer?.kick();
    return id;
  }

  start(run: (job: JobInfo) => Promise<RunResult>, options: QueueConsumerOptions): void {
    if (this.lifecycle.closed || this.lifecycle.stopping) throw Errors.jobsClosed();
    if (this.consumer) throw Errors.jobsAlreadyStarted();
    if (typeof run !== 'function') throw Errors.jobsBadArgument('run must be a function');
    const checked = checkConsumerOptions(options);
    const context = {
      db: this.db,
      stmt: this.stmt,
      now: () => this.now(),
      keepCompleted: this.keepCompleted,
      onError: this.onError,
      lifecycle: this.lifecycle,
    };
    this.consumer = new EmbeddedConsumer(context, run, checked, this.pollMs);
    this.consumer.poll();
  }

  async get(id: string): Promise<JobInfo | null> {
    checkJobId(id);
    const row = this.sql(() => this.stmt.get.get({ id }));
    return row === undefined ? null : toInfo(row, this.now());
  }

  async counts(api?: string): Promise<QueueCounts> {
    checkApiFilter(api);
    const now = this.now();
    return toCounts(
      this.sql(() => (api === undefined ? this.stmt.counts.all({ now }) : this.stmt.countsOfApi.all({ api, now }))),
    );
  }

  async flush(api?: string): Promise<number> {
    checkApiFilter(api);
    return this.sql(() => (api === undefined ? this.stmt.flush.run() : this.stmt.flushApi.run({ api }))).changes;
  }

  async requeueFailed(api?: string): Promise<number> {
    checkApiFilter(api);
    const now = this.now();
    const changes = this.sql(() =>
      api === undefined ? this.stmt.requeue.run({ now }) : this.stmt.requeueApi.run({ api, now }),
    ).changes;
    if (changes > 0) this.consumer?.kick();
    return changes;
  }

  close(timeoutMs: number = JOB_QUEUE_DEFAULTS.closeTimeoutMs): Promise<void> {
    this.closing ??= this.shutDown(timeoutMs);
    return this.closing;
  }

  /**
   * One round of the consumer: recover expired leases, then claim and start due jobs. Runs on the
   * poll timer; exposed for tests. Errors go to `onError`.
   */
  poll(): void {
    this.consumer?.poll();
  }

  private async shutDown(timeoutMs: number): Promise<void> {
    this.lifecycle.stopping = true;
    if (this.consumer) await this.consumer.stop(timeoutMs);
    this.lifecycle.closed = true;
    this.db.close();
  }

  private now(): number {
    return Math.floor(this.clock());
  }

  private sql<T>(work: () => T): T {
    if (this.lifecycle.closed || this.lifecycle.stopping) throw Errors.jobsClosed();
    try {
      return work();
    } catch (error) {
      throw sqliteError(error);
    }
  }
}
