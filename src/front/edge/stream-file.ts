import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FileHandle } from 'node:fs/promises';
import { openFileRef, type FileRef } from '../../shared/protocol/file-ref.js';
import type { ResponseBuffer, ResponseOwner } from './response-buffer.js';
import { Errors, type AnvilError } from '../../shared/errors.js';

/** Bytes read from the file per write: what one connection holds at most, beyond node's own buffer. */
export const STREAM_CHUNK_BYTES = 64 * 1024;
/** A reader that has not taken a chunk within this long does not keep the file open meanwhile. */
const KEEP_OPEN_WHILE_WAITING_MS = 100;

/**
 * Sends a file an actor checked (ServeStatic) from disk, one chunk at a time: the next chunk is
 * read only once the client has taken the last (`res.write` returned false → 'drain'), so a slow
 * reader holds one chunk of router memory (the first with the head), counted in `buffer`, and a reader that stalls holds no
 * file open. A file that is no longer the one checked: 503 before the head, the connection cut
 * after it (its content-length can no longer be kept).
 */
export async function streamFile(
  res: ServerResponse,
  head: {
    status: number;
    headers: OutgoingHttpHeaders | string[];
    file: FileRef;
    /** What the head takes: it goes out with the first chunk, and counts with it. */ headBytes: number;
  },
  held: { buffer: ResponseBuffer; owner: ResponseOwner; refuse: (res: ServerResponse, error: AnvilError) => void },
): Promise<void> {
  const { file } = head;
  const { buffer, owner } = held;
  let handle: FileHandle | null;
  try {
    handle = await openFileRef(file);
  } catch {
    if (!res.headersSent && !res.destroyed) held.refuse(res, Errors.fileChangedWhileSent());
    return;
  }
  try {
    if (res.destroyed) return;
    try {
      res.writeHead(head.status, head.headers);
    } catch {
      held.refuse(res, Errors.responseHeadInvalid());
      return;
    }
    let position = 0;
    let unsentHead = head.headBytes;
    while (position < file.size) {
      handle ??= await openFileRef(file);
      const chunk = Buffer.allocUnsafe(Math.min(STREAM_CHUNK_BYTES, file.size - position));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (res.destroyed) return;
      if (bytesRead === 0) throw new Error('the file shrank');
      position += bytesRead;
      const held = bytesRead + unsentHead;
      unsentHead = 0;
      buffer.hold(res, held, owner);
      const taken = res.write(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead), () =>
        buffer.release(res, held),
      );
      if (taken) continue;
      if (!(await drained(res, KEEP_OPEN_WHILE_WAITING_MS))) {
        await handle.close();
        handle = null;
        await drained(res, Infinity);
      }
      if (res.destroyed) return;
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** True once the response drained (or closed), false when `ms` passed first. */
function drained(res: ServerResponse, ms: number): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onDrain);
      if (timer !== undefined) clearTimeout(timer);
      resolve(value);
    };
    const onDrain = () => done(true);
    res.once('drain', onDrain);
    res.once('close', onDrain);
    const timer = Number.isFinite(ms) ? setTimeout(() => done(false), ms) : undefined;
  });
}
