// Safe unpacking of an uploaded API folder (.tar.gz). See SPEC §6 `POST /anvil/api`.
//
// Tenants are attackers, so the archive is treated as hostile input:
//  - node-tar's `Parser` reads the tar format; we decompress with node:zlib ourselves so that a
//    non-gzip upload is refused (node-tar would happily read plain, brotli or zstd tar) and so
//    that every decompressed byte is counted.
//  - Every entry is checked (path, type, conflicts with earlier entries) BEFORE anything touches
//    the disk; the writes are ours, never node-tar's: see entry-writer.ts.
//  - Refusals are visible, one error per offending entry: see unpack-failure.ts.
//  - Limits (compressed bytes, unpacked file bytes, entries, and the expanded tar stream) stop
//    the unpack at once with 413.

import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { EntryJudge } from './entry-judge.js';
import { EntryWriter } from './entry-writer.js';
import { cleanDestination, prepareDestination } from './unpack-destination.js';
import { quote, UnpackFailure } from './unpack-failure.js';
import { defaultUnpackLimits, type UnpackLimits } from './upload-limits.js';

export { checkEntryPath } from './entry-path.js';
export { defaultUnpackLimits, type UnpackLimits } from './upload-limits.js';

const MiB = 1024 * 1024;

export type UnpackResult =
  | { ok: true; root: string; files: number; bytes: number } // root = directory that contains api.yaml
  | { ok: false; status: 400 | 413 | 415; errors: string[] };

export const NO_API_YAML_ERROR =
  'the archive has no api.yaml at its top level (or in a single top-level folder)';

/** Per-entry tar overhead allowed on top of maxUnpackedBytes (header, padding, pax records). */
const TAR_OVERHEAD_PER_ENTRY = 4096;
/** Pax / GNU long-name records larger than this are refused (node-tar default: 1 MiB). */
const MAX_META_ENTRY_BYTES = 64 * 1024;

/**
 * Unpacks a .tar.gz into `destDir` (created if missing; it must be empty).
 *
 * `source` is never destroyed: when the unpack stops early (limit, corrupt data) we remove our
 * listeners and pause it, leaving a no-op 'error' listener; the caller owns the rest of it (an HTTP
 * request body should then be drained or the connection closed; see read-upload.ts).
 *
 * On failure (`ok: false`) `destDir` is removed if we created it, emptied otherwise. Unexpected
 * file-system errors (ENOSPC, EACCES...) are thrown after the same clean-up.
 */
export async function unpackTarGz(
  source: NodeJS.ReadableStream | Buffer,
  destDir: string,
  limits: UnpackLimits = defaultUnpackLimits,
): Promise<UnpackResult> {
  const dest = path.resolve(destDir);
  // Listen for 'error' / 'close' on the source before the first await, so that nothing it emits
  // while we prepare the destination is lost (or crashes the process).
  const job = new UnpackJob(dest, limits, source);
  let created: boolean;
  try {
    created = await prepareDestination(dest);
  } catch (err) {
    job.dispose();
    throw err;
  }
  let result: UnpackResult;
  try {
    result = await job.run();
  } catch (err) {
    await cleanDestination(dest, created);
    throw err;
  }
  if (!result.ok) await cleanDestination(dest, created);
  return result;
}

const noop = (): void => {};

class UnpackJob {
  private readonly failure: UnpackFailure;

  private compressed = 0;
  private gzipHead = Buffer.alloc(0);
  private expanded = 0;
  private readonly maxExpanded: number;
  private tarHead: Buffer | undefined;
  private sniffed = false;
  private sawEof = false;
  private waitingDrain = false;

  private entries = 0;
  private declaredBytes = 0;
  private readonly judge = new EntryJudge();
  private readonly writer: EntryWriter;

  private settle: () => void = noop;
  private detachSource: () => void = noop;
  private readonly gunzip: Gunzip;
  private readonly parser: Parser;

  /** What happened to a stream source before run() started reading it. */
  private early: { error?: unknown; closed?: boolean } = {};
  private unwatch: () => void = noop;

  constructor(
    private readonly dest: string,
    private readonly limits: UnpackLimits,
    private readonly source: NodeJS.ReadableStream | Buffer,
  ) {
    this.failure = new UnpackFailure(() => {
      this.detachSource();
      this.gunzip.destroy();
      this.settle();
    });
    this.writer = new EntryWriter(dest, limits.maxUnpackedBytes, this.failure);
    this.maxExpanded = limits.maxUnpackedBytes + limits.maxEntries * TAR_OVERHEAD_PER_ENTRY + MiB;
    this.gunzip = createGunzip();
    this.parser = new Parser({
      strict: false,
      // Only ever plain tar reaches the parser: we decompressed it. Turn off its sniffing of
      // brotli/zstd; a gzip magic in the decompressed data is refused before it gets here.
      brotli: false,
      zstd: false,
      maxMetaEntrySize: MAX_META_ENTRY_BYTES,
      onwarn: (_code: string, message: string) => this.failure.fail(400, `the archive is not a valid tar file: ${message}`),
      onReadEntry: (entry: ReadEntry) => this.onEntry(entry),
    });
    if (!Buffer.isBuffer(source)) {
      const onError = (err: unknown): void => {
        this.early.error ??= err;
      };
      const onClose = (): void => {
        this.early.closed = true;
      };
      source.on('error', onError);
      source.on('close', onClose);
      this.unwatch = () => {
        source.removeListener('error', onError);
        source.removeListener('close', onClose);
      };
      const state = source as Partial<Readable>;
      if (state.destroyed === true || state.readableEnded === true) this.early.closed = true;
      if (state.errored) this.early.error ??= state.errored;
    }
  }

  /** Used when run() will never be called. */
  dispose(): void {
    this.unwatch();
    if (!Buffer.isBuffer(this.source)) this.source.on('error', noop);
    this.gunzip.destroy();
  }

  async run(): Promise<UnpackResult> {
    const done = new Promise<void>((resolve) => (this.settle = resolve));
    this.wireGunzip();
    this.wireParser();
    this.unwatch();
    this.feedSource(this.source);
    await done;
    this.detachSource();
    this.gunzip.destroy();
    await this.writer.idle;
    if (this.writer.error !== undefined) throw this.writer.error;
    const failed = this.failure.result();
    if (failed) return failed;
    const root = await this.findRoot();
    if (root === undefined) return { ok: false, status: 400, errors: [NO_API_YAML_ERROR] };
    return { ok: true, root, files: this.writer.files, bytes: this.writer.bytes };
  }

  // --- bytes in: upload -> gunzip -> parser --------------------------------------------------

  private feedSource(source: NodeJS.ReadableStream | Buffer): void {
    const max = this.limits.maxUploadBytes;
    const tooBig = `the upload is larger than ${max} bytes`;
    if (Buffer.isBuffer(source)) {
      if (source.length > max) return this.failure.fail(413, tooBig);
      if (source.length === 0) return this.failure.fail(400, 'the upload is empty');
      this.compressed = source.length;
      if (!this.checkGzipHead(source)) return;
      this.gunzip.end(source);
      return;
    }

    let ended = false;
    let attached = true;
    const onData = (data: Buffer | string): void => {
      if (this.failure.stopped) return;
      const chunk = typeof data === 'string' ? Buffer.from(data) : data;
      this.compressed += chunk.length;
      if (this.compressed > max) return this.failure.fail(413, tooBig);
      if (!this.checkGzipHead(chunk)) return;
      if (!this.gunzip.write(chunk)) {
        source.pause();
        this.gunzip.once('drain', () => {
          if (!this.failure.stopped && attached) source.resume();
        });
      }
    };
    const onEnd = (): void => {
      ended = true;
      detach();
      if (this.failure.stopped) return;
      if (this.compressed === 0) return this.failure.fail(400, 'the upload is empty');
      if (this.gzipHead.length < 2) return this.failure.fail(400, NOT_GZIP);
      this.gunzip.end();
    };
    const onError = (err: unknown): void => {
      detach();
      this.failure.fail(400, `the upload failed: ${err instanceof Error ? err.message : String(err)}`);
    };
    const onClose = (): void => {
      if (ended) return;
      detach();
      this.failure.fail(400, 'the upload was interrupted before it was complete');
    };
    const detach = (): void => {
      if (!attached) return;
      attached = false;
      source.removeListener('data', onData);
      source.removeListener('end', onEnd);
      source.removeListener('error', onError);
      source.removeListener('close', onClose);
      source.on('error', noop); // the caller may destroy it later; never crash on that
    };
    this.detachSource = () => {
      const wasAttached = attached;
      detach();
      if (wasAttached && !ended) source.pause();
    };
    if (this.early.error !== undefined || this.early.closed) {
      attached = false;
      source.on('error', noop);
      if (this.early.error !== undefined) return onError(this.early.error);
      return this.failure.fail(400, 'the upload was interrupted before it was complete');
    }
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    source.on('close', onClose);
    source.resume();
  }

  /** Refuses a non-gzip upload as soon as its first two bytes are known. */
  private checkGzipHead(chunk: Buffer): boolean {
    if (this.gzipHead.length >= 2) return true;
    this.gzipHead = Buffer.concat([this.gzipHead, chunk.subarray(0, 2 - this.gzipHead.length)]);
    if (this.gzipHead.length < 2) return true;
    if (this.gzipHead[0] !== 0x1f || this.gzipHead[1] !== 0x8b) {
      this.failure.fail(400, NOT_GZIP);
      return false;
    }
    return true;
  }

  private wireGunzip(): void {
    this.gunzip.on('data', (chunk: Buffer) => {
      if (this.failure.stopped) return;
      this.expanded += chunk.length;
      if (this.expanded > this.maxExpanded) {
        return this.failure.fail(413, `the archive expands to more than ${this.maxExpanded} bytes`);
      }
      if (this.sawEof) return; // padding after the tar end marker: counted, not parsed
      this.feedParser(chunk);
    });
    this.gunzip.on('end', () => {
      if (this.failure.stopped) return;
      if (this.tarHead && !this.sawEof) this.parser.write(this.tarHead);
      this.tarHead = undefined;
      this.parser.end();
    });
    this.gunzip.on('error', (err: Error) => {
      this.failure.fail(400, `the archive is corrupt (gzip: ${err.message})`);
    });
  }

  private feedParser(data: Buffer): void {
    let chunk = data;
    if (!this.sniffed) {
      this.tarHead = this.tarHead ? Buffer.concat([this.tarHead, chunk]) : chunk;
      if (this.tarHead.length < 2) return;
      chunk = this.tarHead;
      this.tarHead = undefined;
      this.sniffed = true;
      if (chunk[0] === 0x1f && chunk[1] === 0x8b) {
        return this.failure.fail(400, 'the archive is compressed twice; upload a single .tar.gz');
      }
    }
    if (!this.parser.write(chunk) && !this.waitingDrain) {
      // The entry being written is paused while its chunk goes to disk: stop inflating.
      this.waitingDrain = true;
      this.gunzip.pause();
      this.parser.once('drain', () => {
        this.waitingDrain = false;
        if (!this.failure.stopped) this.gunzip.resume();
      });
    }
  }

  private wireParser(): void {
    this.parser.on('ignoredEntry', (entry: ReadEntry) => {
      // node-tar ignores types it does not know (sparse files, tape volumes...) and oversized
      // metadata records; ignored is not good enough for us, we refuse them visibly.
      if (this.failure.stopped || !this.countEntry()) return;
      this.failure.reject(
        entry.path,
        entry.meta ? 'metadata record is too large' : `entries of type "${entry.type}" are not allowed`,
      );
    });
    this.parser.on('error', (err: Error) => this.failure.fail(400, `the archive is not a valid tar file: ${err.message}`));
    this.parser.on('eof', () => {
      this.sawEof = true;
    });
    this.parser.on('end', () => this.settle());
  }

  // --- entries ---------------------------------------------------------------------------------

  private countEntry(): boolean {
    this.entries += 1;
    if (this.entries > this.limits.maxEntries) {
      this.failure.fail(413, `the archive has more than ${this.limits.maxEntries} entries`);
      return false;
    }
    return true;
  }

  private onEntry(entry: ReadEntry): void {
    if (this.failure.stopped || !this.countEntry()) {
      entry.resume();
      return;
    }
    const verdict = this.judge.judge(entry);
    if ('reason' in verdict) {
      this.failure.reject(entry.path, verdict.reason);
      entry.resume();
      return;
    }
    if ('skip' in verdict) {
      entry.resume();
      return;
    }
    const { kind, segments } = verdict;
    if (kind === 'dir') {
      if (!this.failure.rejected) this.writer.makeDir(entry, segments);
      entry.resume();
      return;
    }
    this.declaredBytes += entry.size;
    if (this.declaredBytes > this.limits.maxUnpackedBytes) {
      this.failure.fail(413, `entry ${quote(entry.path)}: the archive unpacks to more than ${this.limits.maxUnpackedBytes} bytes`);
      entry.resume();
      return;
    }
    if (this.failure.rejected) {
      entry.resume();
      return;
    }
    this.writer.writeFile(entry, segments);
  }

  // --- result --------------------------------------------------------------------------------

  private async findRoot(): Promise<string | undefined> {
    const top = await readdir(this.dest, { withFileTypes: true });
    if (top.some((d) => d.name === 'api.yaml' && d.isFile())) return this.dest;
    const only = top[0];
    if (top.length === 1 && only !== undefined && only.isDirectory()) {
      const inner = path.join(this.dest, only.name);
      const st = await lstat(path.join(inner, 'api.yaml')).catch(() => undefined);
      if (st?.isFile()) return inner;
    }
    return undefined;
  }
}

const NOT_GZIP = 'the upload is not gzip-compressed: send the API folder as a .tar.gz';
