import Database from 'better-sqlite3';
import { Errors } from '../../shared/errors.js';

/** How long a thread waits for another thread's file change of the same API, ms. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * The disk an API's files take, kept in a small SQLite file of its data dir. Every change to the
 * API's files runs inside {@link update}: one IMMEDIATE transaction, which is also the lock that
 * serializes file changes across the API's threads and processes, so two writes can never pass the
 * quota together. Each thread recounts the folders when it opens the ledger (inside the same lock),
 * so a change cut by a crash between the file operation and the commit is set right on the next
 * start.
 */
export class UsageLedger {
  private readonly db: Database.Database;
  private readonly read: Database.Statement<[], { bytes: number }>;
  private readonly write: Database.Statement<[number]>;

  constructor(file: string, measure: () => number) {
    this.db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.exec('CREATE TABLE IF NOT EXISTS usage (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL)');
      this.read = this.db.prepare('SELECT bytes FROM usage WHERE id = 1');
      this.write = this.db.prepare(
        'INSERT INTO usage (id, bytes) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET bytes = excluded.bytes',
      );
      this.db.transaction(() => this.write.run(measure())).immediate();
    } catch (error) {
      this.db.close();
      throw Errors.fileFailed('files', `the usage ledger cannot be opened: ${(error as Error).message}`);
    }
  }

  /** Runs `work` under the lock with the bytes in use; it does the change and returns the new figure. */
  update<T>(work: (used: number) => { used: number; result: T }): T {
    return this.db
      .transaction(() => {
        const outcome = work(this.read.get()?.bytes ?? 0);
        this.write.run(outcome.used);
        return outcome.result;
      })
      .immediate();
  }

  close(): void {
    this.db.close();
  }
}
