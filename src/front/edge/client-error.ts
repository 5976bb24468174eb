import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { InstanceLog } from '../../shared/logs/instance-log.js';

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
    const status = code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const phrase = STATUS_CODES[status]!;
    // llhttp's reason is one of its fixed texts ("Duplicate Content-Length"), never request bytes.
    const reason = (error as { reason?: unknown }).reason;
    const message = status === 400 && typeof reason === 'string' && reason !== '' ? `${phrase}: ${reason}` : phrase;
    log.info({ status, code, reason: message }, `request refused: ${status}`);
    const body = JSON.stringify({ error: message });
    socket.end(`HTTP/1.1 ${status} ${phrase}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  };
}
