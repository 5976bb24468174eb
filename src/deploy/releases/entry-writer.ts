// Writes the checked entries of an archive. Nothing is written by node-tar: we do the writes
// ourselves, directories one segment at a time, files with O_CREAT|O_EXCL|O_NOFOLLOW, modes
// forced to 0644 / 0755. We never create links, so no path we write can be redirected outside
// `destDir`.

import { constants as fsConstants } from 'node:fs';
import { chmod, lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { ReadEntry } from 'tar';
import { quote, type UnpackFailure } from './unpack-failure.js';
import { CONFLICT, Conflict, isConflict } from './write-conflict.js';

const FILE_MODE = 0o644;
export const DIR_MODE = 0o755;
const OPEN_FLAGS = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_NOFOLLOW ?? 0);

export class EntryWriter {
  /** File-system work runs strictly in archive order. Never rejects (errors go to fsError). */
  private chain: Promise<void> = Promise.resolve();
  private fsError: unknown;
  private readonly madeDirs = new Set<string>();
  private filesWritten = 0;
  private bytesWritten = 0;

  constructor(
    private readonly dest: string,
    private readonly maxUnpackedBytes: number,
    private readonly failure: UnpackFailure,
  ) {}

  /** Settles when the queued work is done. */
  get idle(): Promise<void> {
    return this.chain;
  }

  /** The first unexpected file-system error (ENOSPC, EACCES...), if any. */
  get error(): unknown {
    return this.fsError;
  }

  get files(): number {
    return this.filesWritten;
  }

  get bytes(): number {
    return this.bytesWritten;
  }

  makeDir(entry: ReadEntry, segments: string[]): void {
    this.enqueue(() =>
      this.ensureDir(segments).catch((err: unknown) => {
        if (!isConflict(err)) throw err;
        this.failure.reject(entry.path, CONFLICT);
      }),
    );
  }

  writeFile(entry: ReadEntry, segments: string[]): void {
    entry.pause(); // data waits in the entry (and the parser applies back-pressure) until we write
    this.enqueue(async () => {
      let handle: FileHandle;
      try {
        await this.ensureDir(segments.slice(0, -1));
        handle = await open(this.inside(segments), OPEN_FLAGS, FILE_MODE);
      } catch (err) {
        if (!isConflict(err)) throw err;
        this.failure.reject(entry.path, CONFLICT);
        entry.resume();
        return;
      }
      try {
        await handle.chmod(FILE_MODE); // whatever the umask or the archive says
        await this.pump(entry, handle);
      } finally {
        await handle.close();
      }
      if (!this.failure.stopped) this.filesWritten += 1;
    });
  }

  private enqueue(task: () => Promise<void>): void {
    this.chain = this.chain
      .then(() => (this.failure.stopped ? undefined : task()))
      .catch((err: unknown) => {
        this.fsError ??= err;
        this.failure.fail(400, 'the archive could not be written');
      });
  }

  /** Absolute path of a checked entry, asserted to be strictly inside dest. */
  private inside(segments: string[]): string {
    const abs = path.join(this.dest, ...segments);
    if (!abs.startsWith(this.dest + path.sep)) throw new Error(`unpack: ${abs} is outside ${this.dest}`);
    return abs;
  }

  /** Creates each missing directory of `segments` one by one (never through a link), mode 0755. */
  private async ensureDir(segments: string[]): Promise<void> {
    for (let i = 1; i <= segments.length; i++) {
      const rel = segments.slice(0, i);
      const key = rel.join('/');
      if (this.madeDirs.has(key)) continue;
      const abs = this.inside(rel);
      try {
        await mkdir(abs, { mode: DIR_MODE });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOTDIR') throw new Conflict();
        if (code !== 'EEXIST') throw err;
        const st = await lstat(abs);
        if (!st.isDirectory()) throw new Conflict();
      }
      await chmod(abs, DIR_MODE);
      this.madeDirs.add(key);
    }
  }

  private pump(entry: ReadEntry, handle: FileHandle): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let pending: Promise<unknown> = Promise.resolve();
      const finish = (): void => {
        this.failure.signal.removeEventListener('abort', onAbort);
        entry.removeListener('data', onData);
        entry.removeListener('end', onEnd);
      };
      const onAbort = (): void => {
        finish();
        pending.then(
          () => resolve(),
          () => resolve(),
        );
      };
      const onEnd = (): void => {
        finish();
        pending.then(() => resolve(), reject);
      };
      const onData = (chunk: Buffer): void => {
        if (this.failure.stopped) return;
        this.bytesWritten += chunk.length;
        if (this.bytesWritten > this.maxUnpackedBytes) {
          // Unreachable while node-tar honours header sizes (declared sizes are checked first).
          this.failure.fail(
            413,
            `entry ${quote(entry.path)}: the archive unpacks to more than ${this.maxUnpackedBytes} bytes`,
          );
          return;
        }
        // Writes are chained, not just paused between: a paused Minipass entry may still emit a
        // chunk it had buffered, and two writes in flight at once can land out of order.
        entry.pause();
        pending = pending
          .then(() => writeAll(handle, chunk))
          .then(() => {
            if (!this.failure.stopped) entry.resume();
          });
        pending.catch((err: unknown) => {
          finish();
          reject(err);
        });
      };
      if (this.failure.signal.aborted) return resolve();
      this.failure.signal.addEventListener('abort', onAbort, { once: true });
      entry.on('data', onData);
      entry.on('end', onEnd);
      entry.resume();
    });
  }
}

/** FileHandle.write may write less than asked: loop until the whole chunk is on disk. */
async function writeAll(handle: FileHandle, chunk: Buffer): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset);
    offset += bytesWritten;
  }
}
