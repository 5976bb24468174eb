import { STATUS_CODES } from 'node:http';
import { AnvilError } from './anvil-error.js';
import { Errors } from './catalogue.js';

/** True when this error goes to the instance log: a status >= 500, or an error marked `logged`. */
export function isLoggedError(error: unknown, status: number): boolean {
  return status >= 500 || (error instanceof AnvilError && error.logged);
}

/** Converts anything thrown into a status and message; unknown errors are internal (500). */
export function toStatusError(error: unknown): { status: number; message: string; code: string } {
  if (error instanceof AnvilError) return { status: error.status, message: error.message, code: error.code };
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, message, code: Errors.internal.code };
}

/** Codes of the errors an API gets when it runs into a quota (the `quota…` entries of the catalogue). */
export const QUOTA_CODE_PREFIX = 'ANVIL_ERR_QUOTA_';

/** True for the codes of quota errors, also once an error crossed a thread as code and message. */
export function isQuotaCode(code: string): boolean {
  return code.startsWith(QUOTA_CODE_PREFIX);
}

/**
 * The text sent to a client for an error: statuses >= 500 hide the real message unless debug is
 * on. A quota's message is written for clients (it names the quota, nothing of the host), so it
 * is shown as it is.
 */
export function publicMessage(status: number, message: string, debug: boolean, code = ''): string {
  if (status >= 500 && !debug && !isQuotaCode(code)) return STATUS_CODES[status] ?? 'Internal Server Error';
  return message;
}

/**
 * The one shape of an error Anvil answers itself (the router to a client, the bus to a calling
 * API): `{"error": message, "code": catalogue code}`, plus `extra` fields (a refused deploy's
 * `errors`). An empty message is sent as the status text.
 */
export function errorBody(
  error: { status: number; message: string; code: string },
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { error: error.message || STATUS_CODES[error.status], code: error.code, ...extra };
}

/** What an API's client is told of anything thrown: a 5xx's message only as its status text (`publicMessage`), an unknown error as a 500. */
export function clientError(error: unknown): AnvilError {
  if (!(error instanceof AnvilError)) return Errors.internal();
  const message = publicMessage(error.status, error.message, false, error.code);
  return message === error.message
    ? error
    : new AnvilError(error.code, error.status, message, error.logged, error.retryAfterSeconds);
}
