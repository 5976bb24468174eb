// The expanded side of an unpack: gunzip -> node-tar's Parser. node-tar only reads the tar
// format; we decompress with node:zlib ourselves so that a non-gzip upload is refused (see
// upload-feed.ts) and so that every decompressed byte is counted.

import { createGunzip, type Gunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { quote, type UnpackFailure } from './unpack-failure.js';
import type { UnpackLimits } from './upload-limits.js';

const MiB = 1024 * 1024;
/** Per-entry tar overhead allowed on top of maxUnpackedBytes (header, padding, pax records). */
const TAR_OVERHEAD_PER_ENTRY = 4096;
/** Pax / GNU long-name records larger than this are refused (node-tar default: 1 MiB). */
const MAX_META_ENTRY_BYTES = 64 * 1024;

export interface TarEvents {
  entry(entry: ReadEntry): void;
  /** node-tar skipped the entry (a type it does not know, an oversized metadata record). */
  ignored(entry: ReadEntry): void;
  end(): void;
}

export class TarReader {
  readonly gunzip: Gunzip;
  private readonly parser: Parser;
  private expanded = 0;
  private readonly maxExpanded: number;
  private tarHead: Buffer | undefined;
  private sniffed = false;
  private sawEof = false;
  private waitingDrain = false;

  constructor(
    limits: UnpackLimits,
    private readonly failure: UnpackFailure,
    private readonly events: TarEvents,
  ) {
    this.maxExpanded = limits.maxUnpackedBytes + limits.maxEntries * TAR_OVERHEAD_PER_ENTRY + MiB;
    this.gunzip = createGunzip();
    this.parser = new Parser({
      strict: false,
      // Only ever plain tar reaches the parser: we decompressed it. Turn off its sniffing of
      // brotli/zstd; a gzip magic in the decompressed data is refused before it gets here.
      brotli: false,
      zstd: false,
      maxMetaEntrySize: MAX_META_ENTRY_BYTES,
      onwarn: (_code: string, message: string, data: unknown) => this.failure.fail(400, invalidTar(message, data)),
      onReadEntry: (entry: ReadEntry) => this.events.entry(entry),
    });
  }

  /** Connects gunzip to the parser; once, before the first compressed byte comes in. */
  wire(): void {
    this.wireGunzip();
    this.wireParser();
  }

  destroy(): void {
    this.gunzip.destroy();
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
    this.parser.on('ignoredEntry', (entry: ReadEntry) => this.events.ignored(entry));
    this.parser.on('error', (err: Error) =>
      this.failure.fail(400, `the archive is not a valid tar file: ${err.message}`),
    );
    this.parser.on('eof', () => {
      this.sawEof = true;
    });
    this.parser.on('end', () => this.events.end());
  }
}

/**
 * node-tar's warning as a refusal, naming the entry when node-tar says which one (a header it
 * refused, an entry cut short); not a block whose checksum fails, which is no header at all.
 */
function invalidTar(message: string, data: unknown): string {
  const about = data as { header?: { path?: unknown; cksumValid?: boolean }; entry?: { path?: unknown } } | undefined;
  const path = about?.header?.cksumValid === false ? undefined : (about?.header?.path ?? about?.entry?.path);
  const entry = typeof path === 'string' && path !== '' ? `entry ${quote(path)}: ` : '';
  return `${entry}the archive is not a valid tar file: ${message}`;
}
