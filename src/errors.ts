import { STATUS_CODES } from 'node:http';

/**
 * Every error Anvil raises on purpose has a code, an HTTP status and a message template, in the
 * manner of Fastify's FST_ERR_* constants. Directives, the engine and the router all throw these.
 */
export class AnvilError extends Error {
  readonly code: string;
  readonly status: number;
  /** Logged although its status is below 500: a refused input an operator should see. */
  readonly logged: boolean;
  constructor(code: string, status: number, message: string, logged = false) {
    super(message);
    this.name = 'AnvilError';
    this.code = code;
    this.status = status;
    this.logged = logged;
  }
}

export type ErrorFactory = ((...args: Array<string | number>) => AnvilError) & { code: string; status: number };

function coded(code: string, status: number, template: string, logged = false): ErrorFactory {
  const make = (...args: Array<string | number>) => {
    let i = 0;
    const message = template.replace(/%s/g, () => String(args[i++] ?? ''));
    return new AnvilError(code, status, message, logged);
  };
  return Object.assign(make, { code, status });
}

export const Errors = {
  notFound: coded('ANVIL_ERR_NOT_FOUND', 404, 'Not Found'),
  unauthorized: coded('ANVIL_ERR_UNAUTHORIZED', 401, 'Unauthorized'),
  badRequest: coded('ANVIL_ERR_BAD_REQUEST', 400, '%s'),
  conflict: coded('ANVIL_ERR_CONFLICT', 409, '%s'),
  bodyTooLarge: coded('ANVIL_ERR_BODY_TOO_LARGE', 413, 'Request body larger than %s bytes'),
  jsonTooDeep: coded('ANVIL_ERR_JSON_TOO_DEEP', 400, 'Bad Request: the JSON body is nested deeper than %s levels', true),
  mailboxFull: coded('ANVIL_ERR_MAILBOX_FULL', 503, 'Service Unavailable: the API is busy, retry later'),
  paused: coded('ANVIL_ERR_PAUSED', 503, 'Service Unavailable: the API is paused after crashing its cell, retry later'),
  notReady: coded('ANVIL_ERR_NOT_READY', 503, 'Service Unavailable'),
  cellDied: coded('ANVIL_ERR_CELL_DIED', 502, 'Bad Gateway: the API stopped while handling the request'),
  actorFailed: coded('ANVIL_ERR_ACTOR_FAILED', 502, 'Bad Gateway: the API could not start'),
  timeout: coded('ANVIL_ERR_TIMEOUT', 504, 'Gateway Timeout'),
  directiveFailed: coded('ANVIL_ERR_DIRECTIVE', 500, '%s'),
  badParameter: coded('ANVIL_ERR_BAD_PARAMETER', 500, 'parameter %s of "%s": %s'),
  thrown: coded('ANVIL_ERR_THROWN', 500, '%s'),
  hostMemory: coded('ANVIL_ERR_HOST_MEMORY', 500, 'memory limit: storing %s would make this request hold more than the API\'s %s MiB outside its isolates', true),
  invalidHeader: coded('ANVIL_ERR_INVALID_HEADER', 500, 'invalid response header: %s'),
} as const;

/** True when this error goes to the instance log: a status >= 500, or an error marked `logged`. */
export function isLoggedError(error: unknown, status: number): boolean {
  return status >= 500 || (error instanceof AnvilError && error.logged);
}

/** Converts anything thrown into a status and message; unknown errors are internal (500). */
export function toStatusError(error: unknown): { status: number; message: string; code: string } {
  if (error instanceof AnvilError) return { status: error.status, message: error.message, code: error.code };
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, message, code: 'ANVIL_ERR_INTERNAL' };
}

/** Codes of the errors an API gets when it runs into a quota (src/quotas/quota-errors.ts). */
export const QUOTA_CODE_PREFIX = 'ANVIL_ERR_QUOTA_';

/**
 * The text sent to a client for an error: statuses >= 500 hide the real message unless debug is
 * on. A quota's message is written for clients (it names the quota, nothing of the host), so it
 * is shown as it is.
 */
export function publicMessage(status: number, message: string, debug: boolean, code = ''): string {
  if (status >= 500 && !debug && !code.startsWith(QUOTA_CODE_PREFIX)) return STATUS_CODES[status] ?? 'Internal Server Error';
  return message;
}
