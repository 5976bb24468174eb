import { credentials } from './session.js';

/** A refusal of the admin host: its status and the message of its `{"error": …}` body. */
export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let onUnauthorized = () => {};

/** Called when the admin host answers 401 to a data call (the key changed, or was wrong). */
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

/** The management headers of the given (or the remembered) credentials. */
export function authHeaders(given = credentials()) {
  return given === null ? {} : { 'public-host': given.host, 'public-host-key': given.key };
}

/**
 * A data call to the admin host: same origin, the management headers, JSON back (null for 204).
 * Throws an HttpError for a status >= 400 (a 401 also calls the unauthorized handler).
 */
export async function call(path, { method = 'GET', body, signal, as } = {}) {
  const headers = authHeaders(as);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    cache: 'no-store',
  });
  if (response.status === 204) return null;
  const text = await response.text();
  let value = null;
  try {
    value = text === '' ? null : JSON.parse(text);
  } catch {
    value = null;
  }
  if (!response.ok) {
    const message =
      value !== null && typeof value.error === 'string' ? value.error : `${response.status} ${response.statusText}`;
    if (response.status === 401 && as === undefined) onUnauthorized();
    throw new HttpError(response.status, message);
  }
  return value;
}

/** An API key in a path segment. */
export function keyPath(key) {
  return `/anvil/api/${encodeURIComponent(key)}`;
}
