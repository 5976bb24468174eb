import type { Socket } from 'node:net';
import type { AnvilError } from '../../shared/errors/anvil-error.js';
import { Errors } from '../../shared/errors/catalogue.js';
import type { RefusalReason } from './connection-gate.js';
import type { ConnectionLimits } from './connection-limits.js';
import { rawFailure } from './raw-failure.js';

export interface ConnectionRefuser {
  /** Closes a connection the gate refused, with its answer while this second has answers left. */
  refuse(socket: Socket, reason: RefusalReason): void;
  /** False once this second's answers are used up: a refused connection is then only closed. */
  answersLeft(): boolean;
}

/** Refused connections answered each second at most; the others of a flood are closed without a word. */
export const ANSWERED_REFUSALS_PER_SECOND = 100;

/**
 * Answers a connection that may not stay open with the refusal's error (rawFailure) and closes
 * it, before node:http ever sees it. A flood of refused connections must cost the router as
 * little as it can, since they compete with everyone's for its accept queue: the answers are made once, and past ANSWERED_REFUSALS_PER_SECOND in a second a refused connection is only
 * closed (one system call, where an answer takes four). What an answered client sent is read and
 * dropped meanwhile: closing a socket with unread bytes resets it, and the client could lose the answer.
 */
export function connectionRefuser(limits: ConnectionLimits): ConnectionRefuser {
  const answers: Record<RefusalReason, Buffer> = {
    per_client: answer(Errors.clientConnections(limits.perClient)),
    total: answer(Errors.connectionsFull(limits.total)),
  };
  let second = 0;
  let answered = 0;
  const answersLeft = () => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) [second, answered] = [now, 0];
    return answered < ANSWERED_REFUSALS_PER_SECOND;
  };
  return {
    answersLeft,
    refuse(socket, reason) {
      if (!answersLeft()) return void socket.destroy();
      answered++;
      socket.on('error', () => socket.destroy());
      socket.resume();
      socket.write(answers[reason]);
      socket.destroySoon();
    },
  };
}

function answer(error: AnvilError): Buffer {
  return Buffer.from(rawFailure(error));
}
