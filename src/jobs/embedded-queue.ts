/**
 * The embedded job queue: one SQLite file, `<dataDir>/.anvil/jobs.sqlite` (WAL, `synchronous=FULL`
 * so that a job whose `add` resolved survives a power cut as well as a crash; busy_timeout 5000).
 *
 * ONE consumer: only the router process calls `start()` on this file. Other connections (the
 * `anvil jobs` commands) may add, read, flush and requeue at any time; the consumer picks their
 * changes up at its next poll. Two consumers on one file would stay correct (claims are atomic and
 * leases are renewed) but `concurrency` and `perApi` would hold per process, not in all.
 *
 * A row is one job. The stored state is waiting, active, completed or failed; a waiting job whose
 * run_at is still ahead is reported as `delayed`. `attempts` counts claims (runs started).
 *
 * Consumer: a poll every `pollMs` (and at once after an add or a finished run)
 *  1. puts back to waiting the active jobs whose lease ran out and that are not in flight here
 *     (their consumer died: at least once), then
 *  2. claims due jobs in one IMMEDIATE transaction: the APIs with waiting jobs are listed by an
 *     index skip-scan, each API with room under `perApi` gives its oldest due jobs, and the oldest
 *     of those fill the free slots under `concurrency`. Claiming sets state=active,
 *     attempts+1, lease_until=now+leaseMs.
 * The lease of every run in flight is renewed every leaseMs/3, so a long run is never claimed a
 * second time while this process lives; it expires only when the process died (or its event loop
 * stalled for a whole lease). A finish is written only if the row is still the claim it ran for
 * (state active, same attempts), so a run that lost its lease cannot overwrite a newer one.
 *
 * Quota (`add` with a JobQuota): the API's jobs in state waiting or active are counted and the job
 * inserted in one IMMEDIATE transaction, so concurrent adds from any connection never pass it.
 *
 * Finish: ok → completed (the newest `keepCompleted` completed jobs of each API are kept, older
 * ones deleted); failed → waiting again at now + backoffMs·2^(attempts-1) while attempts <=
 * retries, else failed with its error (kept until flushed or requeued).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AnvilError, Errors } from '../errors.js';
import { checkApiFilter, checkConsumerOptions, checkNewJob, checkPayloadQuota, JOB_QUEUE_DEFAULTS, newJobId, retryDelay, runSafely } from './job-checks.js';
import type { JobInfo, JobQueue, JobQuota, JobState, NewJob, QueueConsumerOptions, QueueCounts, RunResult } from './job-queue.js';

export const EMBEDDED_QUEUE_DEFAULTS = {
  busyTimeoutMs: 5000,
  pollMs: 50,
  keepCompleted: 1000,
} as const;

export interface EmbeddedQueueOptions {
  dataDir: string;
  /** The clock, epoch ms (tests inject one). Default `Date.now`. Timers stay real. */
  now?: () => number;
  /** Poll interval of the consumer. */
  pollMs?: number;
  /** Completed jobs kept per API (the newest). */
  keepCompleted?: number;
  /** Told about errors of the background work (a poll, a renewal, a finish); default: ignored. */
  onError?: (error: Error) => void;
}

export function embeddedQueueFile(dataDir: string): string {
  return join(dataDir, '.anvil', 'jobs.sqlite');
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  api TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('waiting', 'active', 'completed', 'failed')),
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  created_at INTEGER NOT NULL,
  run_at INTEGER NOT NULL,
  lease_until INTEGER,
  finished_at INTEGER
);
-- "is anything due?" and the order of claims
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, run_at);
-- the APIs with waiting jobs (skip-scan) and each one's oldest due jobs
CREATE INDEX IF NOT EXISTS jobs_api_due ON jobs (state, api, run_at);
-- counts/flush/requeue of one API, pruning of its completed jobs
CREATE INDEX IF NOT EXISTS jobs_api_state ON jobs (api, state, finished_at);
-- expired leases
CREATE INDEX IF NOT EXISTS jobs_lease ON jobs (lease_until) WHERE state = 'active';
`;

interface Row {
  id: string;
  api: string;
  state: 'waiting' | 'active' | 'completed' | 'failed';
  payload: string;
  attempts: number;
  error: string | null;
  created_at: number;
  run_at: number;
  lease_until: number | null;
  finished_at: number | null;
}

interface Candidate {
  id: string;
  run_at: number;
  seq: number;
}

interface Statements {
  insert: Database.Statement<{ id: string; api: string; payload: string; now: number; runAt: number }>;
  get: Database.Statement<{ id: string }, Row>;
  queuedOfApi: Database.Statement<{ api: string }, { n: number }>;
  anyDue: Database.Statement<{ now: number }, { one: number }>;
  apisWaiting: Database.Statement<[], { api: string }>;
  dueOfApi: Database.Statement<{ api: string; now: number; limit: number }, Candidate>;
  claim: Database.Statement<{ id: string; now: number; until: number }, Row>;
  anyExpired: Database.Statement<{ now: number }, { one: number }>;
  recover: Database.Statement<{ now: number; inFlight: string }>;
  renew: Database.Statement<{ id: string; attempts: number; until: number }>;
  complete: Database.Statement<{ id: string; attempts: number; now: number }>;
  retry: Database.Statement<{ id: string; attempts: number; runAt: number; error: string }>;
  fail: Database.Statement<{ id: string; attempts: number; now: number; error: string }>;
  prune: Database.Statement<{ api: string; keep: number }>;
  counts: Database.Statement<{ now: number }, { state: Row['state']; later: number; n: number }>;
  countsOfApi: Database.Statement<{ api: string; now: number }, { state: Row['state']; later: number; n: number }>;
  flush: Database.Statement<[]>;
  flushApi: Database.Statement<{ api: string }>;
  requeue: Database.Statement<{ now: number }>;
  requeueApi: Database.Statement<{ api: string; now: number }>;
}

// The distinct APIs with waiting jobs, one index seek each (SQLite has no loose index scan).
const APIS_WAITING_SQL = `
WITH RECURSIVE apis(api) AS (
  SELECT (SELECT min(api) FROM jobs WHERE state = 'waiting')
  UNION ALL
  SELECT (SELECT min(api) FROM jobs WHERE state = 'waiting' AND api > apis.api) FROM apis WHERE apis.api IS NOT NULL
)
SELECT api FROM apis WHERE api IS NOT NULL`;

function sqliteError(error: unknown): AnvilError {
  if (error instanceof AnvilError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) {
    return Errors.jobsUnavailable(`the SQLite queue is busy (${message})`);
  }
  return Errors.jobsFailed(`SQLite: ${message}`);
}

function toInfo(row: Row, now: number): JobInfo {
  const state: JobState = row.state === 'waiting' && row.run_at > now ? 'delayed' : row.state;
  return {
    id: row.id,
    api: row.api,
    state,
    payload: row.payload,
    attempts: row.attempts,
    error: row.error,
    createdAt: row.created_at,
    runAt: row.run_at,
    finishedAt: row.finished_at,
  };
}

interface Consumer {
  run: (job: JobInfo) => Promise<RunResult>;
  options: QueueConsumerOptions;
  poller: NodeJS.Timeout;
  renewer: NodeJS.Timeout;
}

interface InFlight {
  api: string;
  /** The claim this run holds: attempts after the claim. */
  attempts: number;
  done: Promise<void>;
}

export class EmbeddedJobQueue implements JobQueue {
  readonly file: string;
  private readonly db: Database.Database;
  private readonly stmt: Statements;
  private readonly clock: () => number;
  private readonly pollMs: number;
  private readonly keepCompleted: number;
  private readonly onError: (error: Error) => void;
  private consumer: Consumer | undefined;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly perApi = new Map<string, number>();
  private kickPending = false;
  private stopping = false;
  private closed = false;
  private closing: Promise<void> | undefined;

  static open(options: EmbeddedQueueOptions): EmbeddedJobQueue {
    if (options === null || typeof options !== 'object' || typeof options.dataDir !== 'string' || options.dataDir === '') {
      throw Errors.jobsBadArgument('dataDir must be a non-empty path');
    }
    const pollMs = options.pollMs ?? EMBEDDED_QUEUE_DEFAULTS.pollMs;
    const keepCompleted = options.keepCompleted ?? EMBEDDED_QUEUE_DEFAULTS.keepCompleted;
    if (!Number.isSafeInteger(pollMs) || pollMs < 1) throw Errors.jobsBadArgument(`pollMs must be an integer >= 1, got ${pollMs}`);
    if (!Number.isSafeInteger(keepCompleted) || keepCompleted < 0) throw Errors.jobsBadArgument(`keepCompleted must be an integer >= 0, got ${keepCompleted}`);
    const file = embeddedQueueFile(options.dataDir);
    mkdirSync(join(options.dataDir, '.anvil'), { recursive: true });
    const db = new Database(file, { timeout: EMBEDDED_QUEUE_DEFAULTS.busyTimeoutMs });
    try {
      db.pragma(`busy_timeout = ${EMBEDDED_QUEUE_DEFAULTS.busyTimeoutMs}`);
      db.pragma('journal_mode = WAL');
      // FULL: in WAL mode every commit syncs the WAL, so an acknowledged add survives a power cut.
      db.pragma('synchronous = FULL');
      db.exec(SCHEMA);
      return new EmbeddedJobQueue(file, db, options, pollMs, keepCompleted);
    } catch (error) {
      db.close();
      throw sqliteError(error);
    }
  }

  private constructor(file: string, db: Database.Database, options: EmbeddedQueueOptions, pollMs: number, keepCompleted: number) {
    this.file = file;
    this.db = db;
    this.clock = options.now ?? Date.now;
    this.pollMs = pollMs;
    this.keepCompleted = keepCompleted;
    this.onError = options.onError ?? (() => {});
    const fields = 'id, api, state, payload, attempts, error, created_at, run_at, lease_until, finished_at';
    const claimed = `id = @id AND state = 'active' AND attempts = @attempts`;
    const countsSql = (where: string) =>
      `SELECT state, (state = 'waiting' AND run_at > @now) AS later, count(*) AS n FROM jobs ${where} GROUP BY state, later`;
    this.stmt = {
      insert: db.prepare(
        `INSERT INTO jobs (id, api, state, payload, attempts, created_at, run_at) VALUES (@id, @api, 'waiting', @payload, 0, @now, @runAt)`,
      ),
      get: db.prepare(`SELECT ${fields} FROM jobs WHERE id = @id`),
      queuedOfApi: db.prepare(`SELECT count(*) AS n FROM jobs WHERE api = @api AND state IN ('waiting', 'active')`),
      anyDue: db.prepare(`SELECT 1 AS one FROM jobs WHERE state = 'waiting' AND run_at <= @now LIMIT 1`),
      apisWaiting: db.prepare(APIS_WAITING_SQL),
      dueOfApi: db.prepare(
        `SELECT id, run_at, rowid AS seq FROM jobs WHERE state = 'waiting' AND api = @api AND run_at <= @now ORDER BY run_at, rowid LIMIT @limit`,
      ),
      claim: db.prepare(
        `UPDATE jobs SET state = 'active', attempts = attempts + 1, run_at = @now, lease_until = @until
         WHERE id = @id AND state = 'waiting' RETURNING ${fields}`,
      ),
      anyExpired: db.prepare(`SELECT 1 AS one FROM jobs WHERE state = 'active' AND lease_until <= @now LIMIT 1`),
      recover: db.prepare(
        `UPDATE jobs SET state = 'waiting', run_at = @now, lease_until = NULL
         WHERE state = 'active' AND lease_until <= @now AND id NOT IN (SELECT value FROM json_each(@inFlight))`,
      ),
      renew: db.prepare(`UPDATE jobs SET lease_until = @until WHERE ${claimed}`),
      complete: db.prepare(`UPDATE jobs SET state = 'completed', finished_at = @now, lease_until = NULL WHERE ${claimed}`),
      retry: db.prepare(`UPDATE jobs SET state = 'waiting', run_at = @runAt, lease_until = NULL, error = @error WHERE ${claimed}`),
      fail: db.prepare(`UPDATE jobs SET state = 'failed', finished_at = @now, lease_until = NULL, error = @error WHERE ${claimed}`),
      prune: db.prepare(
        `DELETE FROM jobs WHERE rowid IN (
           SELECT rowid FROM jobs WHERE api = @api AND state = 'completed' ORDER BY finished_at DESC, rowid DESC LIMIT -1 OFFSET @keep)`,
      ),
      counts: db.prepare(countsSql('')),
      countsOfApi: db.prepare(countsSql('WHERE api = @api')),
      flush: db.prepare(`DELETE FROM jobs WHERE state IN ('waiting', 'completed', 'failed')`),
      flushApi: db.prepare(`DELETE FROM jobs WHERE api = @api AND state IN ('waiting', 'completed', 'failed')`),
      requeue: db.prepare(
        `UPDATE jobs SET state = 'waiting', attempts = 0, error = NULL, run_at = @now, finished_at = NULL, lease_until = NULL WHERE state = 'failed'`,
      ),
      requeueApi: db.prepare(
        `UPDATE jobs SET state = 'waiting', attempts = 0, error = NULL, run_at = @now, finished_at = NULL, lease_until = NULL
         WHERE api = @api AND state = 'failed'`,
      ),
    };
  }

  async add(job: NewJob, quota?: JobQuota): Promise<string> {
    checkNewJob(job);
    checkPayloadQuota(job, quota);
    const now = this.now();
    const id = newJobId(now);
    const insert = () => this.stmt.insert.run({ id, api: job.api, payload: job.payload, now, runAt: now + Math.ceil(job.delayMs) });
    if (quota === undefined) this.sql(insert);
    else {
      // IMMEDIATE: the count and the insert hold the write lock together, across connections.
      const counted = this.db.transaction(() => {
        if (this.stmt.queuedOfApi.get({ api: job.api })!.n >= quota.maxQueued) throw Errors.quotaQueuedJobs(quota.maxQueued);
        insert();
      });
      this.sql(() => counted.immediate());
    }
    this.kick();
    return id;
  }

  start(run: (job: JobInfo) => Promise<RunResult>, options: QueueConsumerOptions): void {
    if (this.closed || this.stopping) throw Errors.jobsClosed();
    if (this.consumer) throw Errors.jobsAlreadyStarted();
    if (typeof run !== 'function') throw Errors.jobsBadArgument('run must be a function');
    const checked = checkConsumerOptions(options);
    const poller = setInterval(() => this.poll(), this.pollMs);
    const renewer = setInterval(() => this.renewLeases(), Math.max(5, Math.floor(checked.leaseMs / 3)));
    poller.unref();
    renewer.unref();
    this.consumer = { run, options: checked, poller, renewer };
    this.poll();
  }

  async get(id: string): Promise<JobInfo | null> {
    if (typeof id !== 'string') throw Errors.jobsBadArgument('the job id must be a string');
    const row = this.sql(() => this.stmt.get.get({ id }));
    return row === undefined ? null : toInfo(row, this.now());
  }

  async counts(api?: string): Promise<QueueCounts> {
    checkApiFilter(api);
    const now = this.now();
    const rows = this.sql(() => (api === undefined ? this.stmt.counts.all({ now }) : this.stmt.countsOfApi.all({ api, now })));
    const counts: QueueCounts = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0 };
    for (const row of rows) {
      const state: JobState = row.state === 'waiting' && row.later ? 'delayed' : row.state;
      counts[state] += row.n;
    }
    return counts;
  }

  async flush(api?: string): Promise<number> {
    checkApiFilter(api);
    return this.sql(() => (api === undefined ? this.stmt.flush.run() : this.stmt.flushApi.run({ api }))).changes;
  }

  async requeueFailed(api?: string): Promise<number> {
    checkApiFilter(api);
    const now = this.now();
    const changes = this.sql(() => (api === undefined ? this.stmt.requeue.run({ now }) : this.stmt.requeueApi.run({ api, now }))).changes;
    if (changes > 0) this.kick();
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
    const consumer = this.consumer;
    if (!consumer || this.stopping || this.closed) return;
    try {
      const now = this.now();
      if (this.stmt.anyExpired.get({ now })) {
        this.stmt.recover.run({ now, inFlight: JSON.stringify([...this.inFlight.keys()]) });
      }
      const free = consumer.options.concurrency - this.inFlight.size;
      if (free <= 0 || !this.stmt.anyDue.get({ now })) return;
      const claimed = this.claim(consumer.options, free, now);
      for (const row of claimed) this.dispatch(consumer, toInfo(row, now));
    } catch (error) {
      this.onError(sqliteError(error));
    }
  }

  private claim(options: QueueConsumerOptions, free: number, now: number): Row[] {
    const transaction = this.db.transaction((): Row[] => {
      const candidates: Candidate[] = [];
      for (const { api } of this.stmt.apisWaiting.all()) {
        const room = Math.min(free, options.perApi - (this.perApi.get(api) ?? 0));
        if (room > 0) candidates.push(...this.stmt.dueOfApi.all({ api, now, limit: room }));
      }
      candidates.sort((a, b) => a.run_at - b.run_at || a.seq - b.seq);
      const rows: Row[] = [];
      for (const candidate of candidates.slice(0, free)) {
        const row = this.stmt.claim.get({ id: candidate.id, now, until: now + options.leaseMs });
        if (row) rows.push(row);
      }
      return rows;
    });
    return transaction.immediate();
  }

  private dispatch(consumer: Consumer, info: JobInfo): void {
    this.perApi.set(info.api, (this.perApi.get(info.api) ?? 0) + 1);
    const done = runSafely(consumer.run, info)
      .then((result) => this.finish(consumer.options, info, result))
      .catch((error: unknown) => {
        if (!this.closed) this.onError(error instanceof Error ? error : new Error(String(error)));
      })
      .finally(() => {
        this.inFlight.delete(info.id);
        const left = (this.perApi.get(info.api) ?? 1) - 1;
        if (left > 0) this.perApi.set(info.api, left);
        else this.perApi.delete(info.api);
        this.kick();
      });
    this.inFlight.set(info.id, { api: info.api, attempts: info.attempts, done });
  }

  private finish(options: QueueConsumerOptions, info: JobInfo, result: RunResult): void {
    // After close gave up on this run, the row stays active: the lease runs out and it runs again.
    if (this.closed) return;
    const now = this.now();
    const claim = { id: info.id, attempts: info.attempts };
    if (result.ok) {
      const written = this.stmt.complete.run({ ...claim, now }).changes;
      if (written > 0) this.stmt.prune.run({ api: info.api, keep: this.keepCompleted });
      return;
    }
    const delay = retryDelay(info.attempts, options);
    if (delay === null) this.stmt.fail.run({ ...claim, now, error: result.error });
    else this.stmt.retry.run({ ...claim, runAt: now + delay, error: result.error });
  }

  private renewLeases(): void {
    const consumer = this.consumer;
    if (!consumer || this.closed || this.inFlight.size === 0) return;
    try {
      const until = this.now() + consumer.options.leaseMs;
      this.db.transaction(() => {
        for (const [id, run] of this.inFlight) this.stmt.renew.run({ id, attempts: run.attempts, until });
      })();
    } catch (error) {
      this.onError(sqliteError(error));
    }
  }

  /** A poll soon (coalesced): after an add, a finished run, a requeue. */
  private kick(): void {
    if (!this.consumer || this.kickPending || this.stopping || this.closed) return;
    this.kickPending = true;
    setImmediate(() => {
      this.kickPending = false;
      this.poll();
    });
  }

  private async shutDown(timeoutMs: number): Promise<void> {
    this.stopping = true;
    if (this.consumer) {
      clearInterval(this.consumer.poller);
      const running = [...this.inFlight.values()].map((run) => run.done);
      if (running.length > 0) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.max(0, timeoutMs));
        });
        await Promise.race([Promise.all(running), timeout]);
        clearTimeout(timer);
      }
      clearInterval(this.consumer.renewer);
    }
    this.closed = true;
    this.db.close();
  }

  private now(): number {
    return Math.floor(this.clock());
  }

  private sql<T>(work: () => T): T {
    if (this.closed || this.stopping) throw Errors.jobsClosed();
    try {
      return work();
    } catch (error) {
      throw sqliteError(error);
    }
  }
}
