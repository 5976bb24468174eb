/**
 * Transactions on one actor thread's database. Requests on a thread interleave at every await, and
 * share the thread's connection: a transaction begun on it would take in the writes of every other
 * request until it ends, and roll them back with its own. So a transaction gets a connection of its
 * own (one per thread, reused), and one request at a time has it:
 *
 *  - Another request's Begin waits its turn (first come, first served), at most
 *    DATABASE_LIMITS.busyTimeoutMs, then fails with 503.
 *  - While a transaction is open, its connection holds SQLite's write lock: another request's write
 *    on the shared connection would wait for it synchronously, holding the very thread the
 *    transaction needs to end. Such a write is refused (`guardWrites`); DatabaseQuery first waits
 *    for the transaction to end (`whenNoneOpen`). Reads go on and see what was committed.
 */
import type { ApiRuntime } from '../../engine/context.js';
import { Errors } from '../../shared/errors.js';
import { ApiDatabase, apiDatabase, DATABASE_LIMITS, databaseQuota } from './api-database.js';

/** Who holds the transaction: a token per Begin. */
export type TransactionOwner = object;

interface Waiter {
  owner: TransactionOwner;
  take: () => void;
  timer: NodeJS.Timeout;
}

export class ThreadTransactions {
  private owner: TransactionOwner | null = null;
  private readonly queue: Waiter[] = [];
  private ended: Array<() => void> = [];
  /** The transactions' own connection, opened by the first Begin. */
  private connection: ApiDatabase | null = null;

  constructor(private readonly api: ApiRuntime) {}

  /** True while a transaction of this thread holds the write lock. */
  get open(): boolean {
    return this.connection !== null && this.connection.inTransaction;
  }

  /** Opens a transaction for `owner` once the connection is free; its connection. */
  async begin(owner: TransactionOwner, timeoutMs: number = DATABASE_LIMITS.busyTimeoutMs): Promise<ApiDatabase> {
    if (this.owner !== null || this.queue.length > 0) await this.turn(owner, timeoutMs);
    this.owner = owner;
    try {
      const db = this.connection ?? this.connect();
      db.begin();
      return db;
    } catch (error) {
      this.handOver();
      throw error;
    }
  }

  /** Commits (or rolls back) `owner`'s transaction and gives the connection to the next in line. */
  finish(owner: TransactionOwner, action: 'commit' | 'rollback'): void {
    if (this.owner !== owner || this.connection === null) return;
    const db = this.connection;
    try {
      if (action === 'commit') db.commit();
    } finally {
      // A failed COMMIT leaves the transaction open: it is rolled back, so the lock never outlives it.
      try {
        db.rollback();
      } finally {
        this.handOver();
      }
    }
  }

  /**
   * Resolves when the open transaction ends, or after `timeoutMs` (the caller checks `open` again);
   * rejects when there is no time left.
   */
  async whenNoneOpen(timeoutMs: number): Promise<void> {
    if (!this.open) return;
    if (timeoutMs <= 0) throw Errors.transactionBusy(`it did not end within ${DATABASE_LIMITS.busyTimeoutMs} ms`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.ended.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private turn(owner: TransactionOwner, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        owner,
        take: resolve,
        timer: setTimeout(() => {
          const at = this.queue.indexOf(waiter);
          if (at >= 0) this.queue.splice(at, 1);
          reject(Errors.transactionBusy(`its turn to begin a transaction did not come within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.queue.push(waiter);
    });
  }

  close(): void {
    this.connection?.close();
  }

  /** Opens the transactions' connection, and from then on refuses writes on the shared one while a transaction is open. */
  private connect(): ApiDatabase {
    const shared = apiDatabase(this.api);
    const own = new ApiDatabase(this.api.dataDir, databaseQuota(this.api));
    try {
      own.migrate(this.api.releaseDir);
    } catch (error) {
      own.close();
      throw error;
    }
    shared.guardWrites(() => {
      if (this.open)
        throw Errors.transactionBusy("a write cannot wait for it here (a custom directive's state.db); retry");
    });
    this.connection = own;
    return own;
  }

  /** The writers waiting for the lock go first (one statement each), then the next transaction. */
  private handOver(): void {
    this.owner = null;
    const ended = this.ended;
    this.ended = [];
    for (const wake of ended) wake();
    const next = this.queue.shift();
    if (next === undefined) return;
    clearTimeout(next.timer);
    this.owner = next.owner;
    next.take();
  }
}

/**
 * The thread's transactions (resource `db-transactions`; their connection is closed with the
 * thread, which rolls back whatever it still had open).
 */
export function threadTransactions(api: ApiRuntime): ThreadTransactions {
  return api.resource('db-transactions', () => new ThreadTransactions(api));
}
