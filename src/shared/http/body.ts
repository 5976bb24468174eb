import type { IncomingMessage } from 'node:http';
import { Errors } from '../errors.js';

/**
 * Chunks smaller than this on average, when there are more than TINY_CHUNKS_AFTER of them (a body
 * sent in many tiny pieces, chunked encoding a few bytes at a time), are joined: writing each apart
 * to the thread would cost more than copying them.
 */
const TINY_CHUNK_BYTES = 512;
const TINY_CHUNKS_AFTER = 16;

/**
 * Reads a request body up to `limit` bytes. A declared or actual size over the limit rejects with
 * 413 at once, and the rest of the body is drained (see discardBody) so the 413 reaches the client;
 * no body at all resolves to null without waiting.
 *
 * The body is not copied: it resolves to the chunk it came in, or to the chunks it came in, in
 * order, which the router writes after the request frame's head as they are (see encodeRequestHead;
 * only a body in many tiny chunks is joined here).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | Buffer[] | null> {
  const declared = req.headers['content-length'];
  if (declared === undefined && req.headers['transfer-encoding'] === undefined) return Promise.resolve(null);
  if (declared !== undefined && Number(declared) > limit) {
    discardBody(req, drainBudget(limit));
    return Promise.reject(Errors.bodyTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        discardBody(req, drainBudget(limit) - size);
        reject(Errors.bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (failed) return;
      if (size === 0) resolve(null);
      else if (chunks.length === 1) resolve(chunks[0]!);
      else if (chunks.length > TINY_CHUNKS_AFTER && size < chunks.length * TINY_CHUNK_BYTES)
        resolve(Buffer.concat(chunks, size));
      else resolve(chunks);
    });
    req.on('error', (error) => {
      if (!failed) {
        failed = true;
        reject(error);
      }
    });
  });
}

/**
 * How much of a refused body is read and thrown away before the connection is cut. An ordinary
 * client sends its whole body before it reads the answer: cut short, it sees a reset, not the 413
 * (seen in CI with a 5 MiB body against the 1 MiB limit, when the budget was 2× the limit). Eight
 * times the limit, at least 8 MiB, lets such clients read their answer; one that keeps sending
 * beyond it is cut.
 */
export function drainBudget(limit: number): number {
  return Math.max(8 * limit, 8 * 1024 * 1024);
}

/**
 * Reads the rest of a refused body and throws it away, so the answer (413, 415, …) reaches a client
 * that is still sending instead of a reset connection. Past `budget` bytes the client is ignoring
 * the answer and the request is destroyed.
 */
export function discardBody(req: IncomingMessage, budget: number): void {
  if (req.readableEnded || req.destroyed || req.complete) return;
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > budget) req.destroy();
  });
  req.resume();
}
