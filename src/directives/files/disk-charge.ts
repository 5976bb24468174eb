import { lstatSync, readdirSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/**
 * What an API's file costs against its disk quota: its size rounded up to 4 KiB blocks, at least
 * one block (as `du` counts, so a million empty files are not free), and a block per folder.
 */
export const BLOCK_BYTES = 4096;
export const FOLDER_CHARGE = BLOCK_BYTES;

export function chargeOf(size: number): number {
  return Math.max(1, Math.ceil(size / BLOCK_BYTES)) * BLOCK_BYTES;
}

function entriesOf(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** Each entry of `folder` with its own stats (links not followed); entries gone meanwhile are passed over. */
function* statsOf(folder: string): Generator<[string, Stats]> {
  for (const name of entriesOf(folder)) {
    const path = join(folder, name);
    try {
      yield [path, lstatSync(path)];
    } catch {
      // gone since it was listed
    }
  }
}

/** The charge of everything under `root` (not the root itself); links count as files and are not followed. */
export function measureFolder(root: string): number {
  let total = 0;
  const folders = [root];
  while (folders.length > 0) {
    for (const [path, stat] of statsOf(folders.pop()!)) {
      if (stat.isDirectory()) {
        total += FOLDER_CHARGE;
        folders.push(path);
      } else {
        total += chargeOf(stat.size);
      }
    }
  }
  return total;
}

/**
 * Deletes the regular files under `root` whose modification time is at or before `now` (the file
 * cache keeps its expiry there), and the folders that leaves empty. Returns the charge freed.
 */
export function removeExpired(root: string, now: number): number {
  let freed = 0;
  const sweep = (folder: string): void => {
    for (const [path, stat] of statsOf(folder)) {
      if (stat.isDirectory()) {
        sweep(path);
        if (entriesOf(path).length === 0 && tryRemove(() => rmdirSync(path))) freed += FOLDER_CHARGE;
      } else if (stat.isFile() && stat.mtimeMs <= now && tryRemove(() => unlinkSync(path))) {
        freed += chargeOf(stat.size);
      }
    }
  };
  sweep(root);
  return freed;
}

function tryRemove(remove: () => void): boolean {
  try {
    remove();
    return true;
  } catch {
    return false;
  }
}
