import { STATUS_CODES } from 'node:http';
import { errorBody, type AnvilError } from '../../shared/errors.js';

/**
 * An error as a whole HTTP/1.1 response, for a socket node:http does not answer (a request its
 * parser refused, a connection over the bounds): the `{"error", "code"}` body of sendFailure, and
 * the connection closed after it.
 */
export function rawFailure(error: AnvilError): string {
  const body = JSON.stringify(errorBody(error));
  const retryAfter = error.retryAfterSeconds === undefined ? '' : `retry-after: ${error.retryAfterSeconds}\r\n`;
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${retryAfter}\r\n${body}`;
}
