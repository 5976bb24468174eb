/**
 * Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), plus those the
 * sender sets itself (host, content-length): never forwarded, never taken from an API's response.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/** A copy without hop-by-hop headers, nor any header the `connection` header names. */
export function endToEnd(headers: Readonly<Record<string, string | string[]>>): Record<string, string | string[]> {
  const named = new Set<string>();
  const connection = headers.connection;
  for (const value of Array.isArray(connection) ? connection : connection ? [connection] : []) {
    for (const token of value.split(',')) named.add(token.trim().toLowerCase());
  }
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower) && !named.has(lower)) out[lower] = value;
  }
  return out;
}

/** Flat [name, value, …] → a record (repeated names become lists). */
export function headerTable(flat: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i]!.toLowerCase();
    const value = flat[i + 1]!;
    const existing = out[name];
    out[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}
