import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { AnvilError } from '../errors/anvil-error.js';

/**
 * Answers a connection that may not stay open with `error` (its status, its message as JSON) and
 * closes it, before node:http ever sees it. What the client sent is read and dropped meanwhile:
 * closing a socket with unread bytes resets it, and the client could lose the answer.
 */
export function refuseConnection(socket: Socket, error: AnvilError): void {
  socket.on('error', () => socket.destroy());
  socket.resume();
  const body = JSON.stringify({ error: error.message });
  const retryAfter = error.status === 503 ? 'retry-after: 1\r\n' : '';
  socket.write(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${retryAfter}\r\n${body}`,
  );
  socket.destroySoon();
}
