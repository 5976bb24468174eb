/**
 * The embedded queue's consumer: a poll every `pollMs` (and at once after an add or a finished run)
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
 * Finish: ok → completed (the newest `keepCompleted` completed jobs of each API are kept, older
 * ones deleted); failed → waiting again at now + backoffMs·2^(attempts-1) while attempts <=
 * retries, else failed with its error (kept until flushed or requeued).
 */
import type Database from 'better-sqlite3';
import { sqliteError } from './embedded-database.js';
import { toInfo, type Row } from './embedded-rows.js';
import type { Candidate, Statements } from './embedded-statements.js';
import { retryDelay, runSafely } from './job-checks.js';
import type { JobInfo, QueueConsumerOptions, RunResult } from './job-queue.js';
import { RunsPerApi, waitForRuns } from './runs-in-flight.js';

/** The queue's state, as the consumer sees it. */
export interface QueueLifecycle {
  /** close() began: no more polls. */
  stopping: boolean;
  /** The database is closed: runs still in flight write nothing. */
  closed: boolean;
}

export interface ConsumerContext {
  db: Database.Database;
  stmt: Statements;
  /** The queue's clock, whole epoch ms. */
  now: () => number;
  keepCompleted: number;
  onError: (error: Error) => void;
  lifecycle: Readonly<QueueLifecycle>;
}

interface InFlight {
  api: string;
  /** The claim this run holds: attempts after the claim. */
  attempts: number;
  done: Promise<void>;
}

export class EmbeddedConsumer {
  private readonly inFlight = new Map<string, InFlight>();
  private readonly perApi = new RunsPerApi();
  private readonly poller: NodeJS.Timeout;
  private readonly renewer: NodeJS.Timeout;
  private kickPending = false;

  /** Starts the timers; the first poll is the caller's. `options`: checked. */
  constructor(
    private readonly context: ConsumerContext,
    private readonly run: (job: JobInfo) => Promise<RunResult>,
    private readonly options: QueueConsumerOptions,
    pollMs: number,
  ) {
    this.poller = setInterval(() => this.poll(), pollMs);
    this.renewer = setInterval(() => this.renewLeases(), Math.max(5, Math.floor(options.leaseMs / 3)));
    this.poller.unref();
    this.renewer.unref();
  }

  /** One round: recover expired leases, then claim and start due jobs. Errors go to `onError`. */
  poll(): void {
    const { stmt, lifecycle } = this.context;
    if (lifecycle.stopping || lifecycle.closed) return;
    try {
      const now = this.context.now();
      if (stmt.anyExpired.get({ now })) {
        stmt.recover.run({ now, inFlight: JSON.stringify([...this.inFlight.keys()]) });
      }
      const free = this.options.concurrency - this.inFlight.size;
      if (free <= 0 || !stmt.anyDue.get({ now })) return;
      const claimed = this.claim(free, now);
      for (const row of claimed) this.dispatch(toInfo(row, now));
    } catch (error) {
      this.context.onError(sqliteError(error));
    }
  }

  /** A poll soon (coalesced): after an add, a finished run, a requeue. */
  kick(): void {
    const { lifecycle } = this.context;
    if (this.kickPending || lifecycle.stopping || lifecycle.closed) return;
    this.kickPending = true;
    setImmediate(() => {
      this.kickPending = false;
      this.poll();
    });
  }

  /** No more polls; waits for the runs in flight up to `timeoutMs`, renewing their leases meanwhile. */
  async stop(timeoutMs: number): Promise<void> {
    clearInterval(this.poller);
    const running = [...this.inFlight.values()].map((run) => run.done);
    if (running.length > 0) await waitForRuns(running, timeoutMs);
    clearInterval(this.renewer);
  }

  private claim(free: number, now: number): Row[] {
    const { db, stmt } = this.context;
    const transaction = db.transaction((): Row[] => {
      const candidates: Candidate[] = [];
      for (const { api } of stmt.apisWaiting.all()) {
        const room = Math.min(free, this.options.perApi - this.perApi.of(api));
        if (room > 0) candidates.push(...stmt.dueOfApi.all({ api, now, limit: room }));
      }
      candidates.sort((a, b) => a.run_at - b.run_at || a.seq - b.seq);
      const rows: Row[] = [];
      for (const candidate of candidates.slice(0, free)) {
        const row = stmt.claim.get({ id: candidate.id, now, until: now + this.options.leaseMs });
        if (row) rows.push(row);
      }
      return rows;
    });
    return transaction.immediate();
  }

  private dispatch(info: JobInfo): void {
    this.perApi.started(info.api);
    const done = runSafely(this.run, info)
      .then((result) => this.finish(info, result))
      .catch((error: unknown) => {
        if (!this.context.lifecycle.closed)
          this.context.onError(error instanceof Error ? error : new Error(String(error)));
      })
      .finally(() => {
        this.inFlight.delete(info.id);
        this.perApi.ended(info.api);
        this.kick();
      });
    this.inFlight.set(info.id, { api: info.api, attempts: info.attempts, done });
  }

  private finish(info: JobInfo, result: RunResult): void {
    const { stmt, lifecycle } = this.context;
    // After close gave up on this run, the row stays active: the lease runs out and it runs again.
    if (lifecycle.closed) return;
    const now = this.context.now();
    const claim = { id: info.id, attempts: info.attempts };
    if (result.ok) {
      const written = stmt.complete.run({ ...claim, now }).changes;
      if (written > 0) stmt.prune.run({ api: info.api, keep: this.context.keepCompleted });
      return;
    }
    const delay = retryDelay(info.attempts, this.options);
    if (delay === null) stmt.fail.run({ ...claim, now, error: result.error });
    else stmt.retry.run({ ...claim, runAt: now + delay, error: result.error });
  }

  private renewLeases(): void {
    if (this.context.lifecycle.closed || this.inFlight.size === 0) return;
    try {
      const until = this.context.now() + this.options.leaseMs;
      this.context.db.transaction(() => {
        for (const [id, run] of this.inFlight) this.context.stmt.renew.run({ id, attempts: run.attempts, until });
      })();
    } catch (error) {
      this.context.onError(sqliteError(error));
    }
  }
}
