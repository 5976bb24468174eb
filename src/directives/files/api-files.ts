import { randomUUID } from 'node:crypto';
import { lstatSync, mkdirSync, realpathSync, renameSync, rmdirSync, statSync, unlinkSync, type Stats } from 'node:fs';
import { mkdir, realpath, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AnvilError, Errors, QuotaError } from '../../shared/errors.js';
import { STORAGE_FOLDER } from '../static/roots.js';
import { isInside, readInside } from '../static/safe-file.js';
import { chargeOf, FOLDER_CHARGE, measureFolder, removeExpired } from './disk-charge.js';
import { UsageLedger } from './usage-ledger.js';

/**
 * The API's own files, in two folders of its data dir (never the data dir itself, which holds its
 * database and logs): `storage/` (SaveFile, ReadFile, DeleteFile, FileSize; what ServeStatic
 * `storage: true` serves) and `cache/` (CachedFileGet/Set). Names come checked (names.ts); here
 * every path is also confined by its real path, so a link inside the folders that leads out is
 * refused (403), and no write follows a link. Writes go to a temporary file first, then are
 * renamed into place under the usage ledger's lock, which counts them against the disk quota (507,
 * nothing written); expired cache files are swept before a write is refused.
 */
export type FileArea = 'storage' | 'cache';

export const CACHE_FOLDER = 'cache';
const TMP_FOLDER = 'files-tmp';
const LEDGER_FILE = 'files-usage.sqlite';

export class ApiFiles {
  private ledgerValue: UsageLedger | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly maxBytes: number,
    private readonly refusals: { add(quota: string): void },
    /** The public host's disk total: writes are refused while it is over (deletes pass). */
    private readonly hostDisk: { check(): void } | null = null,
    /** The API's clock (an `anvil test` case's own), for what has expired in the cache. */
    private readonly now: () => number = Date.now,
  ) {}

  root(area: FileArea): string {
    return join(this.dataDir, area === 'storage' ? STORAGE_FOLDER : CACHE_FOLDER);
  }

  /** The file's stats, or null when there is none (a folder is not a file). */
  async stat(directive: string, area: FileArea, segments: string[]): Promise<Stats | null> {
    const real = await this.locate(directive, area, segments);
    if (real === null) return null;
    const found = await stat(real).catch(() => null);
    return found !== null && found.isFile() ? found : null;
  }

  /** The file's bytes, or null when there is none; a file over `maxBytes` is a 500. */
  async read(directive: string, area: FileArea, segments: string[], maxBytes: number): Promise<Buffer | null> {
    if ((await this.locate(directive, area, segments)) === null) return null;
    const read = await readInside(this.root(area), segments, maxBytes);
    if (read.kind === 'too-large') throw Errors.fileTooLarge(directive, quoted(segments), `${maxBytes} bytes`);
    return read.kind === 'ok' ? read.data : null;
  }

  /** Writes (or replaces) the file, making its folders; `expiresAt` (epoch ms) becomes its modification time. */
  async write(directive: string, area: FileArea, segments: string[], data: Buffer, expiresAt?: number): Promise<void> {
    this.hostDisk?.check();
    const root = this.root(area);
    const tmpFolder = join(this.dataDir, TMP_FOLDER);
    await Promise.all([mkdir(root, { recursive: true }), mkdir(tmpFolder, { recursive: true })]);
    const tmp = join(tmpFolder, randomUUID());
    try {
      await writeFile(tmp, data, { flag: 'wx', mode: 0o600 });
      if (expiresAt !== undefined) await utimes(tmp, new Date(), new Date(expiresAt));
      this.change(directive, (used) => {
        const rootReal = realpathSync(root);
        const { parent, missing } = planFolders(directive, rootReal, segments);
        const target = join(parent, segments[segments.length - 1]!);
        const before = existingFile(directive, target, segments);
        let after =
          used - (before === null ? 0 : chargeOf(before.size)) + chargeOf(data.length) + missing.length * FOLDER_CHARGE;
        if (after > used && after > this.maxBytes) {
          const freed = removeExpired(this.root('cache'), this.now());
          used -= freed;
          after -= freed;
          if (after > used && after > this.maxBytes)
            return { used, result: Errors.quotaFilesBytes(after, this.maxBytes) };
        }
        for (const folder of missing) mkdirSync(folder);
        renameSync(tmp, target);
        return { used: after, result: null };
      });
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /** Deletes the file and the folders that leaves empty; false when there was no file. */
  remove(directive: string, area: FileArea, segments: string[]): boolean {
    let rootReal: string;
    try {
      rootReal = realpathSync(this.root(area));
    } catch {
      return false;
    }
    return this.change(directive, (used) => {
      const parent = existingFolder(directive, rootReal, segments);
      const target = parent === null ? null : join(parent, segments[segments.length - 1]!);
      const found = target === null ? null : existingFile(directive, target, segments);
      if (found === null) return { used, result: false };
      unlinkSync(target!);
      let freed = chargeOf(found.size);
      for (let folder = parent!; folder !== rootReal && isInside(rootReal, folder); folder = dirname(folder)) {
        try {
          rmdirSync(folder);
        } catch {
          break;
        }
        freed += FOLDER_CHARGE;
      }
      return { used: Math.max(0, used - freed), result: true };
    });
  }

  close(): void {
    this.ledgerValue?.close();
    this.ledgerValue = null;
  }

  /** Runs a change under the ledger's lock; an error the change returns is thrown once the new usage is recorded. */
  private change<T>(directive: string, work: (used: number) => { used: number; result: T | AnvilError }): T {
    let outcome: T | AnvilError;
    try {
      outcome = this.ledger().update(work);
    } catch (error) {
      if (error instanceof AnvilError) throw error;
      throw Errors.fileFailed(directive, (error as Error).message);
    }
    if (outcome instanceof QuotaError) this.refusals.add(outcome.quota);
    if (outcome instanceof AnvilError) throw outcome;
    return outcome;
  }

  private ledger(): UsageLedger {
    this.ledgerValue ??= new UsageLedger(
      join(this.dataDir, LEDGER_FILE),
      () => measureFolder(this.root('storage')) + measureFolder(this.root('cache')),
    );
    return this.ledgerValue;
  }

  /** The file's real path when it exists inside its folder; null when it (or the folder) is missing; 403 when it leads out. */
  private async locate(directive: string, area: FileArea, segments: string[]): Promise<string | null> {
    let rootReal: string;
    let real: string;
    try {
      rootReal = await realpath(this.root(area));
      real = await realpath(join(rootReal, ...segments));
    } catch {
      return null;
    }
    if (real === rootReal || !isInside(rootReal, real)) throw Errors.fileOutside(directive, quoted(segments));
    return real;
  }
}

function quoted(segments: string[]): string {
  return JSON.stringify(segments.join('/'));
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** A regular file at `target`, or null when there is none; a link or a folder there is refused. */
function existingFile(directive: string, target: string, segments: string[]): Stats | null {
  const found = lstatOrNull(target);
  if (found === null) return null;
  if (found.isSymbolicLink()) throw Errors.fileOutside(directive, quoted(segments));
  if (!found.isFile()) throw Errors.fileConflict(directive, `${quoted(segments)} is a folder, not a file`);
  return found;
}

/** Walks the folders of `segments` (all but the last) from the root: the real parent and the folders to make. */
function planFolders(directive: string, rootReal: string, segments: string[]): { parent: string; missing: string[] } {
  let path = rootReal;
  const missing: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    path = join(path, segment);
    if (missing.length > 0) {
      missing.push(path);
      continue;
    }
    const found = lstatOrNull(path);
    if (found === null) missing.push(path);
    else path = folderAt(directive, rootReal, path, found, segments);
  }
  return { parent: path, missing };
}

/** The real parent folder of the file when every folder exists; null when one is missing. */
function existingFolder(directive: string, rootReal: string, segments: string[]): string | null {
  let path = rootReal;
  for (const segment of segments.slice(0, -1)) {
    const found = lstatOrNull(join(path, segment));
    if (found === null) return null;
    path = folderAt(directive, rootReal, join(path, segment), found, segments);
  }
  return path;
}

/** The real path of an existing folder on the way, which must stay inside the root. */
function folderAt(directive: string, rootReal: string, path: string, found: Stats, segments: string[]): string {
  if (found.isSymbolicLink()) {
    const real = realpathSync(path);
    if (!isInside(rootReal, real)) throw Errors.fileOutside(directive, quoted(segments));
    if (!statSync(real).isDirectory())
      throw Errors.fileConflict(directive, `${quoted(segments)}: a part of the path is a file, not a folder`);
    return real;
  }
  if (!found.isDirectory())
    throw Errors.fileConflict(directive, `${quoted(segments)}: a part of the path is a file, not a folder`);
  return path;
}
