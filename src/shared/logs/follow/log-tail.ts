import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { readLogFiles } from '../log-files.js';

const POLL_MS = 200;
const READ_CHUNK = 1024 * 1024;
/** At most this much is read per poll; a tail that falls further behind catches up over the next polls. */
const READ_PER_POLL = 8 * 1024 * 1024;
/** A "line" longer than this without a newline is not a log line: it is dropped. */
const MAX_LINE = 4 * 1024 * 1024;

/**
 * Follows an API's request log folder (the threads of its cells append to it, log-files.ts): from
 * the newest file's current end, every complete line appended since, across rotations and new days.
 * It polls (a readdir and a stat every 200 ms) only while started: a folder nobody follows costs
 * nothing.
 */
export class LogTail {
  private file: string | null = null;
  private offset = 0;
  private partial = '';
  /** A character cut by a read's end is completed by the next read. */
  private decoder = new StringDecoder('utf8');
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly dir: string,
    private readonly onLine: (line: string) => void,
  ) {}

  async start(): Promise<void> {
    const newest = (await readLogFiles(this.dir)).at(-1);
    if (newest !== undefined) {
      this.file = newest.name;
      this.offset = await sizeOf(join(this.dir, newest.name));
    }
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      let budget = READ_PER_POLL;
      const files = (await readLogFiles(this.dir)).map((f) => f.name);
      // Files newer than the one followed: finish it, then read each of them from its start.
      const at = this.file === null ? -1 : files.indexOf(this.file);
      const todo = at < 0 ? files.slice(-1) : files.slice(at);
      for (const name of todo) {
        if (name !== this.file)
          [this.file, this.offset, this.partial, this.decoder] = [name, 0, '', new StringDecoder('utf8')];
        budget -= await this.readNew(join(this.dir, name), budget);
        if (budget <= 0 || this.timer === null) break;
      }
    } catch {
      // The folder or a file went away (retention, the API deleted): the next poll looks again.
    } finally {
      this.busy = false;
    }
  }

  /** Reads what was appended to `path` since `offset` (at most `budget` bytes); returns the bytes read. */
  private async readNew(path: string, budget: number): Promise<number> {
    const size = await sizeOf(path);
    // Log files only grow; a smaller one was replaced: read it from its start.
    if (size < this.offset) [this.offset, this.partial, this.decoder] = [0, '', new StringDecoder('utf8')];
    if (size === this.offset) return 0;
    const handle = await open(path, 'r');
    let read = 0;
    try {
      const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, size - this.offset));
      while (read < budget) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
        if (bytesRead === 0) break;
        this.offset += bytesRead;
        read += bytesRead;
        this.split(this.decoder.write(buffer.subarray(0, bytesRead)));
      }
    } finally {
      await handle.close();
    }
    return read;
  }

  private split(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    if (this.partial.length > MAX_LINE) this.partial = '';
    for (const line of lines) if (line !== '') this.onLine(line);
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
