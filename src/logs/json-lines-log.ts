import { mkdirSync, openSync, closeSync, write, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Lines are written at most this long after they were appended (one write for all of them). */
const FLUSH_AFTER_MS = 20;
/** ...or at once when this many bytes wait. */
const FLUSH_AT_BYTES = 64 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Appends JSON lines to `<dir>/YYYY-MM-DD.jsonl` (UTC days), on a file opened for append, so lines
 * from two threads of the same API do not interleave. Lines are gathered and written together: one
 * write per 20 ms or 64 KiB instead of one per request (a write handed to libuv's pool costs more
 * than building the line). The caller never waits; `close()` writes what is left.
 */
export class JsonLinesLog {
  private fd: number | null = null;
  /** When the current file's UTC day ends (the next line goes to a new file). */
  private dayEndsAt = 0;
  private pending: string[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  /** A write handed to libuv and not finished: the next one waits for it (lines stay in order). */
  private writing = false;
  /** Called once the write in flight has finished. */
  private afterWrite: (() => void) | null = null;

  constructor(private readonly dir: string) {}

  append(record: Record<string, unknown>): void {
    const now = Date.now();
    if (now >= this.dayEndsAt || this.fd === null) this.open(now);
    const line = JSON.stringify(record) + '\n';
    this.pending.push(line);
    this.pendingBytes += line.length;
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
    const text = this.pending.join('');
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

  private open(now: number): void {
    this.writeLeftSync();
    mkdirSync(this.dir, { recursive: true });
    const day = new Date(now).toISOString().slice(0, 10);
    this.dayEndsAt = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
    this.fd = openSync(join(this.dir, `${day}.jsonl`), 'a');
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
        writeSync(fd, this.pending.join(''));
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

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
