import { closeSync, fstatSync, mkdirSync, openSync, write, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_QUOTAS } from '../quotas/api-quotas.js';
import { lastIndexOf, listLogFiles, logFileName } from './log-files.js';
import { pruneLogs, type RetentionPolicy } from './log-retention.js';

/** Lines are written at most this long after they were appended (one write for all of them). */
const FLUSH_AFTER_MS = 20;
/** ...or at once when this many bytes wait. */
const FLUSH_AT_BYTES = 64 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The file's real size is read after each such part of `fileBytes` written by this writer. */
const SIZE_CHECKS_PER_FILE = 8;

export interface LogEvents {
  /** Files retention removed: too old (`age`) or over the folder's size (`size`). */
  removed?(reason: 'age' | 'size', files: number): void;
}

/**
 * Appends JSON lines to `<dir>/YYYY-MM-DD.jsonl` (UTC days), on a file opened for append, so lines
 * from two threads of the same API do not interleave. Lines are gathered and written together: one
 * write per 20 ms or 64 KiB instead of one per request (a write handed to libuv's pool costs more
 * than building the line). The caller never waits, and nothing here ever fails it: a write that
 * fails is a process warning. `close()` writes what is left.
 *
 * Rotation: once the file holds `fileBytes`, the next line goes to `YYYY-MM-DD.1.jsonl`, then `.2`…
 * The size is counted from the lines written, not asked of the file system per line; the file's
 * real size (other threads of the API append to it too) is read when it is opened and after every
 * eighth of `fileBytes` this writer adds, so with several writers a file passes `fileBytes` by about
 * an eighth of it, plus the lines the others had not flushed yet. Each new file (a new day, a
 * rotation) prunes the folder (log-retention.ts).
 */
export class JsonLinesLog {
  private fd: number | null = null;
  private fileName = '';
  private day = '';
  private index = 0;
  /** Bytes in the current file as far as this writer knows, its pending lines included. */
  private size = 0;
  /** At this `size`, the file's real size is read again. */
  private nextSizeCheck = 0;
  /** When the current file's UTC day ends (the next line goes to a new file). */
  private dayEndsAt = 0;
  /** Lines waiting to be written, each without its newline (`joined` adds them). */
  private pending: string[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  /** A write handed to libuv and not finished: the next one waits for it (lines stay in order). */
  private writing = false;
  /** Called once the write in flight has finished. */
  private afterWrite: (() => void) | null = null;
  private readonly policy: RetentionPolicy;

  constructor(
    private readonly dir: string,
    policy: RetentionPolicy = {
      fileBytes: DEFAULT_QUOTAS.logFileBytes,
      totalBytes: DEFAULT_QUOTAS.logBytes,
      days: DEFAULT_QUOTAS.logDays,
    },
    private readonly events: LogEvents = {},
  ) {
    // A file larger than the whole folder may hold could never be kept.
    this.policy = { ...policy, fileBytes: Math.max(1, Math.min(policy.fileBytes, policy.totalBytes)) };
  }

  append(record: Record<string, unknown>): void {
    const now = Date.now();
    // The newline is added when the lines are joined: appending it here would make a string that
    // byteLength must first copy flat.
    const line = JSON.stringify(record);
    const bytes = Buffer.byteLength(line) + 1;
    try {
      if (now >= this.dayEndsAt || this.fd === null) this.openDay(now);
      if (this.size >= this.nextSizeCheck) this.readSize();
      if (this.size > 0 && this.size + bytes > this.policy.fileBytes) this.rotate(now);
    } catch (error) {
      // No file to write to (the disk, the folder's permissions): the line is lost, the caller is not.
      this.warn(error as Error);
      return;
    }
    this.pending.push(line);
    this.pendingBytes += bytes;
    this.size += bytes;
    if (this.pendingBytes >= FLUSH_AT_BYTES) this.flush();
    else if (this.timer === null) this.timer = setTimeout(this.flush, FLUSH_AFTER_MS);
  }

  /** Writes what is left, after the write in flight (the thread is about to exit), and closes the file. */
  async close(): Promise<void> {
    if (this.writing) await new Promise<void>((resolve) => (this.afterWrite = resolve));
    this.writeLeftSync();
  }

  private readonly flush = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.writing || this.pending.length === 0 || this.fd === null) return;
    const text = joined(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    this.writing = true;
    const fd = this.fd;
    write(fd, text, null, 'utf8', (error) => {
      this.writing = false;
      if (error) this.warn(error);
      if (this.fd !== fd) closeQuietly(fd);
      const after = this.afterWrite;
      this.afterWrite = null;
      if (after !== null) after();
      else if (this.pendingBytes >= FLUSH_AT_BYTES) this.flush();
      else if (this.pending.length > 0 && this.timer === null) this.timer = setTimeout(this.flush, FLUSH_AFTER_MS);
    });
  };

  /** The first line of a UTC day (or of this writer): the day's newest file, or a new one when it is full. */
  private openDay(now: number): void {
    this.day = new Date(now).toISOString().slice(0, 10);
    this.dayEndsAt = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
    mkdirSync(this.dir, { recursive: true });
    this.openFile(lastIndexOf(listLogFiles(this.dir), this.day), now);
  }

  /** The file is full: the day's next file (another thread of the API may have opened it already). */
  private rotate(now: number): void {
    this.openFile(Math.max(this.index + 1, lastIndexOf(listLogFiles(this.dir), this.day)), now);
  }

  private openFile(index: number, now: number): void {
    this.writeLeftSync();
    for (;;) {
      const name = logFileName(this.day, index);
      const fd = openSync(join(this.dir, name), 'a');
      let size: number;
      try {
        size = fstatSync(fd).size;
      } catch (error) {
        closeQuietly(fd);
        throw error;
      }
      if (size < this.policy.fileBytes) {
        [this.fd, this.fileName, this.index, this.size] = [fd, name, index, size];
        break;
      }
      closeQuietly(fd);
      index += 1;
    }
    this.nextSizeCheck = this.size + Math.ceil(this.policy.fileBytes / SIZE_CHECKS_PER_FILE);
    const removed = pruneLogs(this.dir, this.fileName, this.policy, now);
    if (removed.age > 0) this.events.removed?.('age', removed.age);
    if (removed.size > 0) this.events.removed?.('size', removed.size);
  }

  /** What other writers added to the file counts too. */
  private readSize(): void {
    if (this.fd === null) return;
    try {
      const onDisk = fstatSync(this.fd).size + this.pendingBytes;
      if (onDisk > this.size) this.size = onDisk;
    } catch {
      // The size stays an estimate.
    }
    this.nextSizeCheck = this.size + Math.ceil(this.policy.fileBytes / SIZE_CHECKS_PER_FILE);
  }

  /** Writes pending lines now, then closes the file (unless a write still uses it: it closes it). */
  private writeLeftSync(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const fd = this.fd;
    if (fd === null) return;
    this.fd = null;
    if (this.pending.length > 0) {
      try {
        writeSync(fd, joined(this.pending));
      } catch (error) {
        this.warn(error as Error);
      }
      this.pending = [];
      this.pendingBytes = 0;
    }
    if (!this.writing) closeQuietly(fd);
  }

  private warn(error: Error): void {
    process.emitWarning(`log write failed in ${this.dir}: ${error.message}`);
  }
}

function joined(lines: readonly string[]): string {
  return `${lines.join('\n')}\n`;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
