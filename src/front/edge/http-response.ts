import { STATUS_CODES, type ServerResponse } from 'node:http';
import { errorBody, Errors, type AnvilError } from '../../shared/errors.js';
import { HOP_BY_HOP } from '../../shared/http/hop-by-hop.js';
import { headerBytes, responseHeadProblem, type ResponseHeadLimits } from '../../shared/http/response-head.js';
import type { OutgoingResponse } from '../../shared/protocol/requests.js';
import type { ResponseBuffer, ResponseOwner } from './response-buffer.js';
import { streamFile } from './stream-file.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(value);
  // The reason phrase is given: a writeHead that threw (see writeApiResponse) has already set one.
  res.writeHead(status, STATUS_CODES[status] ?? '', {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/**
 * The one way the router answers an error of its own: `{"error": message, "code": catalogue code}`
 * with the error's status, `retry-after` when the error says when to retry, and `extra` fields
 * (a refused deploy's `errors`). The message is sent as it is: hide a 5xx's first where a client
 * of an API gets it (`clientError`).
 */
export function sendFailure(
  res: ServerResponse,
  error: AnvilError,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): void {
  const retry: Record<string, string> =
    error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) };
  sendJson(res, error.status, errorBody(error, extra), { ...retry, ...headers });
}

/**
 * Writes an actor's response. Connection-level headers are dropped and content-length is ours. A
 * response whose head and body pass LARGE_BODY_BYTES is held in `buffer`, head included, until the
 * kernel has it; a file body is streamed (stream-file.ts). The engine checks every header a
 * directive sets, and the status and size of the head (responseHeadProblem); should an unfit head
 * still come, it is refused here too, before anything is written, as is one node:http will not
 * write (a newline in a value, say): the response becomes a 502. Returns why, or null when the
 * response was written.
 */
export function writeApiResponse(
  res: ServerResponse,
  response: OutgoingResponse,
  buffer: ResponseBuffer,
  owner: ResponseOwner & { quotas: ResponseHeadLimits },
  correlationId: string,
): string | null {
  const { body, file } = response;
  const size =
    file !== undefined
      ? file.size
      : body === null
        ? 0
        : typeof body === 'string'
          ? Buffer.byteLength(body)
          : body.length;
  const source = response.headers;
  const unfit = responseHeadProblem(response.status, source, owner.quotas);
  if (unfit !== null) {
    sendFailure(res, Errors.responseHeadRefused(unfit.code), { 'x-correlation-id': correlationId });
    return `${unfit.code}: ${unfit.message}`;
  }
  const headers: string[] = [];
  for (let i = 0; i + 1 < source.length; i += 2) {
    // Header names from actor threads are lower-case by construction (engine/message.ts).
    const name = source[i]!;
    if (!HOP_BY_HOP.has(name)) headers.push(name, source[i + 1]!);
  }
  const bodiless = response.status === 204 || response.status === 304;
  if (!bodiless) headers.push('content-length', String(size));
  const headBytes = STATUS_LINE_BYTES + headerBytes(headers);
  if (file !== undefined && !bodiless && res.req.method !== 'HEAD') {
    void streamFile(res, { status: response.status, headers, headBytes, file }, { buffer, owner, refuse: sendFailure });
    return null;
  }
  try {
    res.writeHead(response.status, headers);
  } catch (error) {
    sendFailure(res, Errors.responseHeadInvalid(), { 'x-correlation-id': correlationId });
    return error instanceof Error ? error.message : String(error);
  }
  if (body === null || bodiless) res.end();
  else if (headBytes + size > LARGE_BODY_BYTES) {
    buffer.hold(res, headBytes + size, owner);
    res.end(body, () => buffer.releaseAll(res));
  } else if (typeof body === 'string') res.end(body);
  // A small body goes as a latin1 string (the same bytes): node:http then sends the head and the
  // body as one string in one write(), where a Buffer body costs a second chunk and a writev().
  else if (size <= ONE_WRITE_MAX_BYTES) res.end(body.toString('latin1'), 'latin1');
  else res.end(body);
  return null;
}

/** `HTTP/1.1 200 OK` and CRLF, about: what the head takes besides its header lines. */
const STATUS_LINE_BYTES = 32;
/** Bodies up to this size are sent in one write with the head (see writeApiResponse). */
const ONE_WRITE_MAX_BYTES = 16 * 1024;
/** Larger responses (head and body) count against the router's response buffer while a client has not taken them. */
export const LARGE_BODY_BYTES = 64 * 1024;
