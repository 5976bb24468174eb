import type { Duplex } from 'node:stream';
import { Errors, type AnvilError } from '../../shared/errors.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { rawFailure } from './raw-failure.js';

/**
 * node:http's `clientError`: a request its parser refused (a bad header, two Content-Length values,
 * a timeout) never reaches the front door. Answers in Anvil's JSON error shape with the parser's
 * reason, logs it, and closes the connection; a socket that already broke is only destroyed.
 */
export function answerClientError(log: InstanceLog): (error: Error, socket: Duplex) => void {
  return (error, socket) => {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (!socket.writable || code.startsWith('ECONN')) {
      socket.destroy();
      return;
    }
    const refusal = parserRefusal(code, (error as { reason?: unknown }).reason);
    log.info({ status: refusal.status, code, reason: refusal.message }, `request refused: ${refusal.status}`);
    socket.end(rawFailure(refusal));
  };
}

function parserRefusal(code: string, reason: unknown): AnvilError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return Errors.requestTimeout();
  if (code === 'HPE_HEADER_OVERFLOW') return Errors.headersTooLarge();
  // llhttp's reason is one of its fixed texts ("Duplicate Content-Length"), never request bytes.
  return typeof reason === 'string' && reason !== '' ? Errors.badRequest(reason) : Errors.unparsableRequest();
}
