// The compressed side of an unpack: upload -> gunzip. Counts the uploaded bytes and refuses a
// non-gzip upload at its first two bytes (node-tar would happily read plain, brotli or zstd tar).

import type { Readable } from 'node:stream';
import type { Gunzip } from 'node:zlib';
import type { UnpackFailure } from './unpack-failure.js';

const NOT_GZIP = 'the upload is not gzip-compressed: send the API folder as a .tar.gz';

const noop = (): void => {};

export class UploadFeed {
  private compressed = 0;
  private gzipHead = Buffer.alloc(0);
  private detachSource: () => void = noop;

  /** What happened to a stream source before start() began reading it. */
  private early: { error?: unknown; closed?: boolean } = {};
  private unwatch: () => void = noop;

  /** Starts watching a stream source for 'error' / 'close' at once, so that none is missed. */
  constructor(
    private readonly source: NodeJS.ReadableStream | Buffer,
    private readonly gunzip: Gunzip,
    private readonly maxUploadBytes: number,
    private readonly failure: UnpackFailure,
  ) {
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

  /** Used when start() will never be called. */
  dispose(): void {
    this.unwatch();
    if (!Buffer.isBuffer(this.source)) this.source.on('error', noop);
  }

  start(): void {
    this.unwatch();
    this.feed(this.source);
  }

  /** Stops reading a stream source and pauses it, leaving a no-op 'error' listener. */
  detach(): void {
    this.detachSource();
  }

  private feed(source: NodeJS.ReadableStream | Buffer): void {
    const max = this.maxUploadBytes;
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
}
