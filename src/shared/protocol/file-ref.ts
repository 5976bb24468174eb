/**
 * A file an actor thread checked (inside its root, a regular file, its size) and hands to the router
 * to stream instead of sending its bytes over the thread's socket: the router then holds a chunk of
 * it per connection, never the whole file. The file is named by its real path and identified by its
 * device, inode, size and change time: whoever opens it (the router, or the thread when a later
 * directive reads the body) opens that path without following a final link and refuses anything
 * but the very file that was checked, so a path swapped in between cannot serve another file.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Errors, type AnvilError } from '../errors.js';

export interface FileRef {
  path: string;
  dev: number;
  ino: number;
  size: number;
  ctimeMs: number;
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

export function fileRefOf(path: string, stat: Stats): FileRef {
  return { path, dev: stat.dev, ino: stat.ino, size: stat.size, ctimeMs: stat.ctimeMs };
}

function isTheFile(stat: Stats, ref: FileRef): boolean {
  return (
    stat.isFile() &&
    stat.dev === ref.dev &&
    stat.ino === ref.ino &&
    stat.size === ref.size &&
    stat.ctimeMs === ref.ctimeMs
  );
}

function changed(ref: FileRef): AnvilError {
  return Errors.staticChanged(ref.path);
}

/** Opens the file for streaming; rejects (ANVIL_ERR_STATIC_CHANGED, 503) when it is not the one checked. */
export async function openFileRef(ref: FileRef): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(ref.path, OPEN_FLAGS);
  } catch {
    throw changed(ref);
  }
  try {
    if (isTheFile(await handle.stat(), ref)) return handle;
  } catch {
    // treated as changed
  }
  await handle.close();
  throw changed(ref);
}

/** The file's bytes (a directive reads a body that was a file); throws when it is not the one checked. */
export function readFileRefSync(ref: FileRef): Buffer {
  let fd: number;
  try {
    fd = openSync(ref.path, OPEN_FLAGS);
  } catch {
    throw changed(ref);
  }
  try {
    if (!isTheFile(fstatSync(fd), ref)) throw changed(ref);
    const data = Buffer.allocUnsafe(ref.size);
    let at = 0;
    while (at < ref.size) {
      const read = readSync(fd, data, at, ref.size - at, at);
      if (read === 0) throw changed(ref);
      at += read;
    }
    return data;
  } finally {
    closeSync(fd);
  }
}
