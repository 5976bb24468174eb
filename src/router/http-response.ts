import type { ServerResponse } from 'node:http';
import { HOP_BY_HOP } from '../http/hop-by-hop.js';
import type { JobResponse } from './job.js';

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
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
 * Writes an actor's response. Connection-level headers are dropped and content-length is ours; a
 * header the API made invalid (a newline in a value, say) turns the response into a 502.
 */
export function writeApiResponse(res: ServerResponse, response: JobResponse): void {
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
    sendError(res, 502, 'Bad Gateway: the API produced an invalid response header');
    return;
  }
  if (body === null || response.status === 204 || response.status === 304) res.end();
  else if (typeof body === 'string') res.end(body);
  // A small body goes as a latin1 string (the same bytes): node:http then sends the head and the
  // body as one string in one write(), where a Buffer body costs a second chunk and a writev().
  else if (size <= ONE_WRITE_MAX_BYTES) res.end(body.toString('latin1'), 'latin1');
  else res.end(body);
}

/** Bodies up to this size are sent in one write with the head (see writeApiResponse). */
const ONE_WRITE_MAX_BYTES = 16 * 1024;
