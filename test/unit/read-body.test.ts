/**
 * readBody hands the router's body on as it arrived, not copied: the chunk itself, or the chunks in
 * order (the router writes them after the request frame's head). Only a body in many tiny chunks
 * is joined.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { readBody } from '../../src/shared/http/body.js';

/** A request whose body arrives as `chunks`, once readBody listens. */
function requestWith(
  chunks: readonly Buffer[],
  headers: Record<string, string> = { 'transfer-encoding': 'chunked' },
): IncomingMessage {
  const req = Object.assign(new EventEmitter(), { headers }) as unknown as IncomingMessage;
  setImmediate(() => {
    for (const chunk of chunks) req.emit('data', chunk);
    req.emit('end');
  });
  return req;
}

describe('readBody (a body as received)', () => {
  it('resolves to the one chunk itself', async () => {
    const chunk = Buffer.from('{"a":1}');
    expect(await readBody(requestWith([chunk]), 1024)).toBe(chunk);
  });

  it('resolves to the chunks themselves, in order, not joined', async () => {
    const chunks = [Buffer.alloc(40_000, 'a'), Buffer.alloc(65_536, 'b'), Buffer.alloc(3, 'c')];
    const body = await readBody(requestWith(chunks), 1024 * 1024);
    expect(Array.isArray(body)).toBe(true);
    expect((body as Buffer[]).every((chunk, i) => chunk === chunks[i])).toBe(true);
    expect((body as Buffer[]).length).toBe(3);
  });

  it('joins a body sent in many tiny chunks (writing each apart would cost more)', async () => {
    const chunks = Array.from({ length: 100 }, (_, i) => Buffer.from(String(i % 10)));
    const body = await readBody(requestWith(chunks), 1024);
    expect(Buffer.isBuffer(body)).toBe(true);
    expect((body as Buffer).toString()).toBe(chunks.map(String).join(''));
  });

  it('no body: null', async () => {
    expect(await readBody(requestWith([], {}), 1024)).toBeNull();
    expect(await readBody(requestWith([]), 1024)).toBeNull();
  });
});
