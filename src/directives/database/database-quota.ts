/**
 * The disk quota of an API's SQLite database (ApiQuotas.databaseBytes), held on each of its
 * connections: the database file and its write-ahead log together stay under the quota, plus the
 * log's slack (a sixteenth of the quota, at most 8 MiB) and its frame headers (24 bytes a page).
 *
 * The file holds at most half the quota in pages (`max_page_count`; a statement that would need
 * one more page fails with SQLITE_FULL and is rolled back). A transaction writes each page it
 * changes to the log once (SQLite overwrites a page's frame of the same transaction in place), so
 * its log is never larger than the file may be: the other half. Between writes the log is kept
 * under its slack (SQLite checkpoints it every half slack and truncates it to the slack): a log
 * over it is emptied (checkpointed and truncated) after a write, and before the next one. A log
 * that cannot be emptied without waiting (another thread's statement still reads the pages it
 * holds, or writes) refuses writes until it can be, so commits piling up behind a long read cannot
 * grow it either. Temporary tables get the same page limit (`temp.max_page_count`).
 */
import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { Errors, type AnvilError, type QuotaError } from '../../shared/errors.js';

/** What the log may hold between two writes: a sixteenth of the quota, within these bounds. */
const MIN_LOG_SLACK_BYTES = 64 * 1024;
const MAX_LOG_SLACK_BYTES = 8 * 1024 * 1024;
/** SQLite's own automatic checkpoint, in pages (its default): a smaller slack checkpoints more often. */
const AUTO_CHECKPOINT_PAGES = 1000;

/** The log's slack under a quota of `maxBytes`. */
export function logSlackBytes(maxBytes: number): number {
  return Math.min(MAX_LOG_SLACK_BYTES, Math.max(MIN_LOG_SLACK_BYTES, Math.floor(maxBytes / 16)));
}
/** With less free space than this on its file system, SQLITE_FULL is the disk's, not the quota's. */
const DISK_NEARLY_FULL_BYTES = 16 * 1024 * 1024;

export class DatabaseQuota {
  /** Pages the database file may hold. */
  readonly maxPages: number;
  private readonly pageSize: number;
  private readonly logFile: string;
  private readonly slackBytes: number;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    /** The quota, bytes of disk. */
    readonly maxBytes: number,
    private readonly refusals: { add(quota: string): void },
    /** The connection's busy timeout, restored after a checkpoint tried without waiting. */
    private readonly busyTimeoutMs: number,
  ) {
    this.pageSize = Number(db.pragma('page_size', { simple: true }));
    this.maxPages = Math.max(1, Math.floor(maxBytes / 2 / this.pageSize));
    this.logFile = `${file}-wal`;
    this.slackBytes = logSlackBytes(maxBytes);
    // A file already larger keeps its pages (SQLite never sets the limit below the page count):
    // writes that need a new page are refused, the others still pass.
    db.pragma(`max_page_count = ${this.maxPages}`);
    db.pragma(`temp.max_page_count = ${this.maxPages}`);
    db.pragma(`journal_size_limit = ${this.slackBytes}`);
    db.pragma(
      `wal_autocheckpoint = ${Math.max(1, Math.min(AUTO_CHECKPOINT_PAGES, Math.floor(this.slackBytes / 2 / this.pageSize)))}`,
    );
  }

  /** Before a write outside a transaction, or a transaction's BEGIN: the log is emptied if it is over its slack, or the write refused. */
  beforeWrite(): void {
    if (this.logBytes() <= this.slackBytes || this.emptyLog()) return;
    throw this.refused(Errors.quotaDatabaseLog(this.logBytes(), this.maxBytes));
  }

  /** After a write outside a transaction (failed ones too: a statement stopped by the limit leaves its log behind), a commit or a rollback. */
  afterWrite(): void {
    if (this.logBytes() > this.slackBytes) this.emptyLog();
  }

  /** What SQLITE_FULL means here: the quota's refusal, unless the file system itself is (nearly) full. */
  full(message: string): AnvilError {
    if (freeBytes(dirname(this.file)) < DISK_NEARLY_FULL_BYTES) return Errors.diskFull(message);
    const fileBytes = this.maxPages * this.pageSize;
    return this.refused(Errors.quotaDatabaseBytes(fileBytes, this.maxPages, this.maxBytes));
  }

  private refused(error: QuotaError): QuotaError {
    this.refusals.add(error.quota);
    return error;
  }

  /** A checkpoint that copies the whole log into the file and truncates it, tried without waiting for other connections; true when the log is then under its slack. */
  private emptyLog(): boolean {
    try {
      this.db.pragma('busy_timeout = 0');
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // Busy or failed: the size below says whether it is enough.
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
    return this.logBytes() <= this.slackBytes;
  }

  private logBytes(): number {
    return statSync(this.logFile, { throwIfNoEntry: false })?.size ?? 0;
  }
}

function freeBytes(folder: string): number {
  try {
    const stats = statfsSync(folder);
    return stats.bavail * stats.bsize;
  } catch {
    return 0;
  }
}
