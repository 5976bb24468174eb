import { Errors, type AnvilError } from '../errors.js';

/** What one response's head may take (the API's quotas, from `--max-response-headers` and `--max-response-header-bytes`). */
export interface ResponseHeadLimits {
  readonly responseHeaders: number;
  readonly responseHeaderBytes: number;
}

/**
 * What makes a response unfit to be written, or null: an informational status (1xx) as a final
 * answer, which a client would take for an interim one and then mis-frame what follows on the
 * connection; more header lines or header bytes than the router may hold for one response.
 * `headers` is flat [name, value, …], one line per pair, as the router writes them.
 */
export function responseHeadProblem(
  status: number,
  headers: readonly string[],
  limits: ResponseHeadLimits,
): AnvilError | null {
  if (status < 200) return Errors.informationalStatus(status);
  const lines = headers.length >>> 1;
  if (lines > limits.responseHeaders) return Errors.quotaResponseHeaders(lines, limits.responseHeaders);
  const bytes = headerBytes(headers);
  if (bytes > limits.responseHeaderBytes) return Errors.quotaResponseHeaderBytes(bytes, limits.responseHeaderBytes);
  return null;
}

/**
 * The bytes of the header lines: `name: value` and CRLF each. A value is latin1 (header-syntax.ts
 * refuses anything else), one byte a character.
 */
export function headerBytes(headers: readonly string[]): number {
  let bytes = 0;
  for (let i = 0; i + 1 < headers.length; i += 2) bytes += headers[i]!.length + headers[i + 1]!.length + 4;
  return bytes;
}
