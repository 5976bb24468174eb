import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { AnvilError } from '../errors/anvil-error.js';
import { Errors } from '../errors/catalogue.js';
import type { RefusalReason } from './connection-gate.js';
import type { ConnectionLimits } from './connection-limits.js';

/** Closes a connection the gate refused, with its answer. */
export type RefuseConnection = (socket: Socket, reason: RefusalReason) => void;

/**
 * Answers a connection that may not stay open with the refusal's error (its status, its message as
 * JSON) and closes it, before node:http ever sees it. The answers are made once: a flood of
 * refused connections must cost the router as little as it can (no error object, no encoding per
 * connection). What the client sent is read and dropped meanwhile: closing a socket with unread
 * bytes resets it, and the client could lose the answer.
 */
export function connectionRefuser(limits: ConnectionLimits): RefuseConnection {
  const answers: Record<RefusalReason, Buffer> = {
    per_client: answer(Errors.clientConnections(limits.perClient)),
    total: answer(Errors.connectionsFull(limits.total)),
  };
  return (socket, reason) => {
    socket.on('error', () => socket.destroy());
    socket.resume();
    socket.write(answers[reason]);
    socket.destroySoon();
  };
}

function answer(error: AnvilError): Buffer {
  const body = JSON.stringify({ error: error.message });
  const retryAfter = error.status === 503 ? 'retry-after: 1\r\n' : '';
  return Buffer.from(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${retryAfter}\r\n${body}`,
  );
}
