import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, realpathSync } from 'node:fs';
import { open, readlink, realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { fileRefOf, type FileRef } from '../../shared/protocol/file-ref.js';

/**
 * Reading a file that a tenant or a client names, without ever leaving a root folder (SECURITY.md
 * point 2, "symlink TOCTOU"). A relative name is checked segment by segment (no `..`, `.`, empty
 * segment, absolute path, backslash or NUL); the file's real path (links resolved) must lie under
 * the root's real path; it is opened without following a final link and without blocking (a FIFO
 * must not hang the thread), and on Linux the opened descriptor's own path is checked again, so a
 * link swapped in between the check and the open is caught too. Only regular files are read.
 */

export type SafeRead =
  | { kind: 'ok'; data: Buffer; realPath: string }
  /** Not read: a file larger than `referAbove`, to be streamed by whoever sends it (file-ref.ts). */
  | { kind: 'ref'; file: FileRef; realPath: string }
  | { kind: 'missing' }
  | { kind: 'too-large'; size: number };

const MISSING: SafeRead = Object.freeze({ kind: 'missing' });
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const PROC_FD = process.platform === 'linux' ? '/proc/self/fd/' : null;

/**
 * The segments of a relative path, or null when it could leave its root or is otherwise unsafe.
 * `''` is the root itself (no segment).
 */
export function safeSegments(relative: string): string[] | null {
  if (typeof relative !== 'string') return null;
  if (relative === '') return [];
  if (relative.includes('\0') || relative.includes('\\')) return null;
  if (relative.startsWith('/') || /^[A-Za-z]:/.test(relative)) return null;
  const segments = relative.split('/');
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..') return null;
  }
  return segments;
}

/** True when `real` is `root` itself or lies under it (both real, absolute paths). */
export function isInside(root: string, real: string): boolean {
  if (real === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return real.startsWith(prefix);
}

function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return (
    code === 'ENOENT' ||
    code === 'ENOTDIR' ||
    code === 'ELOOP' ||
    code === 'EACCES' ||
    code === 'EPERM' ||
    code === 'ENAMETOOLONG' ||
    code === 'EISDIR' ||
    code === 'ENXIO'
  );
}

/**
 * Reads `root/<segments…>` if it is a regular file inside `root` of at most `maxBytes`; one larger
 * than `referAbove` is checked the same way and named, not read.
 */
export async function readInside(
  root: string,
  segments: readonly string[],
  maxBytes: number,
  referAbove = Infinity,
): Promise<SafeRead> {
  let rootReal: string;
  let real: string;
  try {
    rootReal = await realpath(root);
    real = await realpath(join(rootReal, ...segments));
  } catch (error) {
    if (isNotFound(error)) return MISSING;
    throw error;
  }
  if (real === rootReal || !isInside(rootReal, real)) return MISSING;
  let handle;
  try {
    handle = await open(real, OPEN_FLAGS);
  } catch (error) {
    if (isNotFound(error)) return MISSING;
    throw error;
  }
  try {
    if (PROC_FD !== null) {
      const opened = await readlink(PROC_FD + handle.fd).catch(() => null);
      if (opened !== null && !isInside(rootReal, opened)) return MISSING;
    }
    const stat = await handle.stat();
    if (!stat.isFile()) return MISSING;
    if (stat.size > maxBytes) return { kind: 'too-large', size: stat.size };
    if (stat.size > referAbove) return { kind: 'ref', file: fileRefOf(real, stat), realPath: real };
    const data = await readBounded(handle, maxBytes);
    if (data === null) return { kind: 'too-large', size: maxBytes + 1 };
    return { kind: 'ok', data, realPath: real };
  } finally {
    await handle.close();
  }
}

/** The synchronous twin of {@link readInside} (template files, read once per thread). */
export function readInsideSync(root: string, segments: readonly string[], maxBytes: number): SafeRead {
  let rootReal: string;
  let real: string;
  try {
    rootReal = realpathSync(root);
    real = realpathSync(join(rootReal, ...segments));
  } catch (error) {
    if (isNotFound(error)) return MISSING;
    throw error;
  }
  if (real === rootReal || !isInside(rootReal, real)) return MISSING;
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (error) {
    if (isNotFound(error)) return MISSING;
    throw error;
  }
  try {
    if (PROC_FD !== null) {
      let opened: string | null = null;
      try {
        opened = readlinkSync(PROC_FD + fd);
      } catch {
        opened = null;
      }
      if (opened !== null && !isInside(rootReal, opened)) return MISSING;
    }
    const stat = fstatSync(fd);
    if (!stat.isFile()) return MISSING;
    if (stat.size > maxBytes) return { kind: 'too-large', size: stat.size };
    const data = readBoundedSync(fd, maxBytes);
    if (data === null) return { kind: 'too-large', size: maxBytes + 1 };
    return { kind: 'ok', data, realPath: real };
  } finally {
    closeSync(fd);
  }
}

/** Reads to the end, or returns null once more than `maxBytes` came (a file may grow after fstat). */
function readBoundedSync(fd: number, maxBytes: number): Buffer | null {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, maxBytes + 1 - total));
    const bytesRead = readSync(fd, chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) return null;
    chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
  }
  return Buffer.concat(chunks, total);
}

async function readBounded(handle: import('node:fs/promises').FileHandle, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) return null;
    chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
  }
  return Buffer.concat(chunks, total);
}
