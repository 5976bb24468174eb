// One unpack, from the first compressed byte to the result. The bytes go upload -> gunzip ->
// node-tar's Parser (upload-feed.ts, tar-reader.ts); each entry the parser reads is counted and
// judged here, then written or refused (entry-judge.ts, entry-writer.ts).

import type { ReadEntry } from 'tar';
import { EntryJudge } from './entry-judge.js';
import { EntryWriter } from './entry-writer.js';
import { TarReader } from './tar-reader.js';
import { quote, UnpackFailure } from './unpack-failure.js';
import { findApiRoot, NO_API_YAML_ERROR, type UnpackResult } from './unpack-result.js';
import { UploadFeed } from './upload-feed.js';
import type { UnpackLimits } from './upload-limits.js';

const noop = (): void => {};

export class UnpackJob {
  private readonly failure: UnpackFailure;
  private readonly tar: TarReader;
  private readonly feed: UploadFeed;
  private readonly judge = new EntryJudge();
  private readonly writer: EntryWriter;
  private entries = 0;
  private declaredBytes = 0;
  private settle: () => void = noop;

  /** Starts watching a stream source at once (see UploadFeed); run() or dispose() must follow. */
  constructor(
    private readonly dest: string,
    private readonly limits: UnpackLimits,
    source: NodeJS.ReadableStream | Buffer,
  ) {
    this.failure = new UnpackFailure(() => {
      this.feed.detach();
      this.tar.destroy();
      this.settle();
    });
    this.writer = new EntryWriter(dest, limits.maxUnpackedBytes, this.failure);
    this.tar = new TarReader(limits, this.failure, {
      entry: (entry) => this.onEntry(entry),
      ignored: (entry) => this.onIgnoredEntry(entry),
      end: () => this.settle(),
    });
    this.feed = new UploadFeed(source, this.tar.gunzip, limits.maxUploadBytes, this.failure);
  }

  /** Used when run() will never be called. */
  dispose(): void {
    this.feed.dispose();
    this.tar.destroy();
  }

  async run(): Promise<UnpackResult> {
    const done = new Promise<void>((resolve) => (this.settle = resolve));
    this.tar.wire();
    this.feed.start();
    await done;
    this.feed.detach();
    this.tar.destroy();
    await this.writer.idle;
    if (this.writer.error !== undefined) throw this.writer.error;
    const failed = this.failure.result();
    if (failed) return failed;
    const root = await findApiRoot(this.dest);
    if (root === undefined) return { ok: false, status: 400, errors: [NO_API_YAML_ERROR] };
    return { ok: true, root, files: this.writer.files, bytes: this.writer.bytes };
  }

  private countEntry(): boolean {
    this.entries += 1;
    if (this.entries > this.limits.maxEntries) {
      this.failure.fail(413, `the archive has more than ${this.limits.maxEntries} entries`);
      return false;
    }
    return true;
  }

  private onIgnoredEntry(entry: ReadEntry): void {
    // node-tar ignores types it does not know (sparse files, tape volumes...) and oversized
    // metadata records; ignored is not good enough for us, we refuse them visibly.
    if (this.failure.stopped || !this.countEntry()) return;
    this.failure.reject(
      entry.path,
      entry.meta ? 'metadata record is too large' : `entries of type "${entry.type}" are not allowed`,
    );
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
      this.failure.fail(
        413,
        `entry ${quote(entry.path)}: the archive unpacks to more than ${this.limits.maxUnpackedBytes} bytes`,
      );
      entry.resume();
      return;
    }
    if (this.failure.rejected) {
      entry.resume();
      return;
    }
    this.writer.writeFile(entry, segments);
  }
}
