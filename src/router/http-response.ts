import { STATUS_CODES, type ServerResponse } from 'node:http';
import { HOP_BY_HOP } from '../http/hop-by-hop.js';
import type { JobResponse } from './job.js';

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  // The reason phrase is given: a writeHead that threw (see writeApiResponse) has already set one.
  res.writeHead(status, STATUS_CODES[status] ?? '', {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: message }, headers);
}

/**
 * Writes an actor's response. Connection-level headers are dropped and content-length is ours. The
 * engine checks every header a directive sets; should an invalid one still come (a newline in a
 * value, say), node:http refuses the head before writing anything and the response becomes a 502:
 * returns why, or null when the response was written.
 */
export function writeApiResponse(res: ServerResponse, response: JobResponse, correlationId: string): string | null {
  const body = response.body;
  const size = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const source = response.headers;
  const headers: string[] = [];
  for (let i = 0; i + 1 < source.length; i += 2) {
    // Header names from actor threads are lower-case by construction (engine/message.ts).
    const name = source[i]!;
    if (!HOP_BY_HOP.has(name)) headers.push(name, source[i + 1]!);
  }
  if (response.status !== 204 && response.status !== 304) headers.push('content-length', String(size));
  try {
    res.writeHead(response.status, headers);
  } catch (error) {
    sendError(res, 502, 'Bad Gateway: the API produced an invalid response head', { 'x-correlation-id': correlationId });
    return error instanceof Error ? error.message : String(error);
  }
  if (body === null || response.status === 204 || response.status === 304) res.end();
  else if (typeof body === 'string') res.end(body);
  // A small body goes as a latin1 string (the same bytes): node:http then sends the head and the
  // body as one string in one write(), where a Buffer body costs a second chunk and a writev().
  else if (size <= ONE_WRITE_MAX_BYTES) res.end(body.toString('latin1'), 'latin1');
  else res.end(body);
  return null;
}

/** Bodies up to this size are sent in one write with the head (see writeApiResponse). */
const ONE_WRITE_MAX_BYTES = 16 * 1024;
