import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/**
 * Appends JSON lines to `<dir>/YYYY-MM-DD.jsonl` (UTC days). Writes are queued on a stream and
 * never awaited by the caller; each line is one write on a file opened for append, so lines from
 * two threads of the same API do not interleave.
 */
export class JsonLinesLog {
  private stream: WriteStream | null = null;
  private day = '';

  constructor(private readonly dir: string) {}

  append(record: Record<string, unknown>): void {
    const now = new Date();
    const day = now.toISOString().slice(0, 10);
    if (day !== this.day || this.stream === null) this.open(day);
    this.stream!.write(JSON.stringify(record) + '\n');
  }

  close(): Promise<void> {
    const stream = this.stream;
    this.stream = null;
    if (stream === null) return Promise.resolve();
    return new Promise((resolve) => stream.end(resolve));
  }

  private open(day: string): void {
    if (this.stream !== null) this.stream.end();
    mkdirSync(this.dir, { recursive: true });
    this.day = day;
    this.stream = createWriteStream(join(this.dir, `${day}.jsonl`), { flags: 'a' });
    this.stream.on('error', (error) => {
      process.emitWarning(`log write failed in ${this.dir}: ${error.message}`);
    });
  }
}
