import { Errors, type AnvilError } from '../../shared/errors.js';
import type { DirectiveContext } from '../../engine/context.js';

/** Parameter schemas shared by Pull and Push. */
export const headerMap = { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } } as const;
export const queryMap = {
  type: 'object',
  additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
} as const;

/** `{ a: 1, b: null }` → `a=1` (null and undefined left out). */
export function queryString(params: Record<string, unknown> | undefined): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params ?? {}))
    if (value !== null && value !== undefined) query.append(key, String(value));
  return query.toString();
}

export function headerRecord(headers: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers ?? {}))
    if (value !== null && value !== undefined) out[key.toLowerCase()] = String(value);
  return out;
}

/** A body parameter: strings as they are, anything else as JSON (with its content-type). */
export function bodyOf(value: unknown, headers: Record<string, string>): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  headers['content-type'] ??= 'application/json';
  return JSON.stringify(value);
}

/** `$.memory.anvil-localhost` when no host is given. */
export function hostOrLocal(ctx: DirectiveContext, host: string | undefined): string {
  return host === undefined || host === '' ? ctx.api.localBaseUrl : host;
}

/**
 * The error for an upstream answer >= 400 when `verify` is on: 502, except a 508 (a call cycle
 * between APIs found deeper down), which stays a 508 all the way back to the client.
 */
export function upstreamFailure(status: number, where: string): AnvilError {
  if (status === 508) return Errors.upstreamLoop(where);
  return Errors.upstreamStatus(where, status);
}
