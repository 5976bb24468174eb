// The folder an archive is unpacked into: it must be empty before, and is cleaned up after a
// failed unpack.

import { chmod, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { DIR_MODE } from './entry-writer.js';

/** Creates `dest` (mode 0755) or checks that it is an empty directory. Returns whether it was created. */
export async function prepareDestination(dest: string): Promise<boolean> {
  const first = await mkdir(dest, { recursive: true, mode: DIR_MODE });
  const st = await lstat(dest);
  if (!st.isDirectory()) throw new Error(`unpackTarGz: ${dest} is not a directory`);
  if (first !== undefined) {
    await chmod(dest, DIR_MODE);
    return true;
  }
  if ((await readdir(dest)).length > 0) throw new Error(`unpackTarGz: ${dest} is not empty`);
  return false;
}

/** Removes `dest` if we created it, empties it otherwise. */
export async function cleanDestination(dest: string, created: boolean): Promise<void> {
  if (created) {
    await rm(dest, { recursive: true, force: true });
    return;
  }
  const children = await readdir(dest).catch(() => [] as string[]);
  await Promise.all(children.map((name) => rm(path.join(dest, name), { recursive: true, force: true })));
}
