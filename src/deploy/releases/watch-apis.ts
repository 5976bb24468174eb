import { existsSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join, sep } from 'node:path';
import { RELEASE_ROOTS } from './folder-files.js';
import { releaseFilesSignature } from './folder-signature.js';

/** How often the folders' files are also compared with what was seen (events Node's recursive watch missed). */
const POLL_MS = 500;

export interface ApisWatcherOptions {
  /** Quiet time after the last change of a folder before it is redeployed. */
  settleMs: number;
  /** Deploys the folder `name` of the watched directory; never throws. */
  redeploy(name: string): Promise<void>;
  /** The folder `name` is gone from the watched directory; never throws. */
  removed(name: string): Promise<void>;
  onError(error: Error): void;
}

/**
 * `anvil start --watch`: watches the `--apis` directory (recursively) and redeploys a sub-folder
 * once its changes settle. Changes to files that never enter a release (a README, an editor's swap
 * file) are ignored; deploys of one folder never overlap (a change during a deploy queues one more).
 * A folder that is deleted is reported once its removal settles. The folders are also compared
 * with what was last seen every POLL_MS: Node 20's recursive watch on Linux can miss an event.
 */
export class ApisWatcher {
  private watcher: FSWatcher | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private poll: NodeJS.Timeout | null = null;
  /** Each folder's release files as last seen (releaseFilesSignature). */
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly apisDir: string,
    private readonly options: ApisWatcherOptions,
  ) {}

  start(): void {
    this.watcher = watch(this.apisDir, { recursive: true, persistent: false }, (_event, filename) => {
      if (filename !== null) this.changed(filename.toString());
    });
    this.watcher.on('error', (error) => this.options.onError(error));
    this.compare(false);
    this.poll = setInterval(() => this.compare(true), POLL_MS);
    this.poll.unref();
  }

  /** Takes each folder's files as they are; with `report`, a folder whose files changed (or that went) since is handled as if watched. */
  private compare(report: boolean): void {
    let names: string[];
    try {
      names = readdirSync(this.apisDir).filter((name) => !name.startsWith('.'));
    } catch {
      return;
    }
    for (const name of new Set([...names, ...this.seen.keys()])) {
      const before = this.seen.get(name) ?? '';
      if (this.remember(name) !== before && report) this.changed(name);
    }
  }

  /** The folder's release files as they are now, kept as the last seen; returned. */
  private remember(name: string): string {
    const files = releaseFilesSignature(join(this.apisDir, name));
    if (files === '') this.seen.delete(name);
    else this.seen.set(name, files);
    return files;
  }

  private changed(path: string): void {
    const [name, ...rest] = path.split(sep);
    if (name === undefined || name === '' || name.startsWith('.')) return;
    // A new folder shows up as its own name; inside one, only what enters a release matters.
    if (rest.length > 0 && !(RELEASE_ROOTS as readonly string[]).includes(rest[0]!)) return;
    // Gone altogether (not a folder that is being written, which has no api.yaml yet): removed.
    const gone = !existsSync(join(this.apisDir, name));
    if (!gone && !existsSync(join(this.apisDir, name, 'api.yaml'))) return;
    clearTimeout(this.timers.get(name));
    this.timers.set(
      name,
      setTimeout(() => {
        this.timers.delete(name);
        this.deploy(name);
      }, this.options.settleMs),
    );
  }

  private deploy(name: string): void {
    if (this.running.has(name)) {
      this.again.add(name);
      return;
    }
    // What is deployed now is what the poll compares with next (it reports no change it saw already).
    this.remember(name);
    // Decided when the change settles: a folder deleted and made again in between is a change.
    const work = existsSync(join(this.apisDir, name)) ? this.options.redeploy(name) : this.options.removed(name);
    const run = work.finally(() => {
      this.running.delete(name);
      if (this.again.delete(name)) this.deploy(name);
    });
    this.running.set(name, run);
  }

  /** Stops watching; waits for a deploy in progress. */
  async close(): Promise<void> {
    this.watcher?.close();
    if (this.poll !== null) clearInterval(this.poll);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.again.clear();
    await Promise.all(this.running.values());
  }
}
