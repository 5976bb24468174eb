import { cpSync, existsSync, mkdirSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { basename, join } from 'node:path';
import { RELEASE_ROOTS } from '../deploy/releases/folder-files.js';
import { releaseFilesSignature as signature } from '../deploy/releases/folder-signature.js';

/** How long a folder's changes must settle before its copy is made again. */
const SETTLE_MS = 40;

/**
 * `anvil dev`: the API folders it is given, anywhere, copied into one directory (what enters a
 * release: api.yaml, Directives, Maps, Assets) that the instance it starts watches with `--watch`.
 * A change in a folder is copied over once it settles; a folder that is deleted is deleted from the
 * copy (the instance then disables its API).
 */
export class DevMirror {
  private readonly watchers: FSWatcher[] = [];
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private poll: NodeJS.Timeout | null = null;
  /** Each folder's release files as last copied (paths, sizes, modification times). */
  private readonly copied = new Map<string, string>();

  constructor(
    readonly dir: string,
    /** Absolute paths of the API folders, each named in the copy by its last path segment. */
    private readonly folders: readonly string[],
  ) {}

  /** Copies every folder and starts watching them. */
  start(): void {
    mkdirSync(this.dir, { recursive: true });
    for (const folder of this.folders) {
      this.copy(folder);
      const watcher = watch(folder, { recursive: true, persistent: false }, (_event, filename) => {
        if (filename === null || (RELEASE_ROOTS as readonly string[]).includes(filename.toString().split(/[\\/]/)[0]!))
          this.changed(folder);
      });
      // A watched folder that is deleted ends its watcher with an error on some systems: it is a removal.
      watcher.on('error', () => this.changed(folder));
      this.watchers.push(watcher);
    }
    // Node 20's recursive watch on Linux can miss an event (and a deleted folder's own watcher may
    // say nothing): each folder's files are also compared with what was copied, four times a second.
    this.poll = setInterval(() => {
      for (const folder of this.folders) if (signature(folder) !== this.copied.get(folder)) this.changed(folder);
    }, 250);
    this.poll.unref();
  }

  close(): void {
    for (const watcher of this.watchers) watcher.close();
    if (this.poll !== null) clearInterval(this.poll);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private copyOf(folder: string): string {
    return join(this.dir, basename(folder));
  }

  private changed(folder: string): void {
    clearTimeout(this.timers.get(folder));
    this.timers.set(
      folder,
      setTimeout(() => {
        this.timers.delete(folder);
        this.copy(folder);
      }, SETTLE_MS),
    );
  }

  /** The folder's release files replace its copy's; a folder that is gone takes its copy with it. */
  private copy(folder: string): void {
    const target = this.copyOf(folder);
    this.copied.set(folder, signature(folder));
    if (!existsSync(folder)) {
      rmSync(target, { recursive: true, force: true });
      return;
    }
    mkdirSync(target, { recursive: true });
    for (const root of RELEASE_ROOTS) {
      const source = join(folder, root);
      const copied = join(target, root);
      if (!existsSync(source)) {
        rmSync(copied, { recursive: true, force: true });
        continue;
      }
      // Directories are replaced whole: a file deleted in the folder goes from the copy too.
      if (root !== 'api.yaml') rmSync(copied, { recursive: true, force: true });
      cpSync(source, copied, { recursive: true, dereference: true });
    }
  }
}
