import { headerTable } from '../../shared/http/hop-by-hop.js';

/**
 * Headers between instances on the internal port. A forwarding instance sets them; the internal
 * listener checks the secret and removes them before the API sees the request, and the forwarder
 * drops any a client sent.
 */
export const CLUSTER_SECRET_HEADER = 'anvil-cluster-secret';
export const CLIENT_ADDRESS_HEADER = 'anvil-client-address';
export const PLACEMENT_EPOCH_HEADER = 'anvil-placement-epoch';
/**
 * Set on the internal port's own operations (a job run, a bus call: owner-calls.ts), not on a
 * forwarded request. Dropped from a client's request like the others: a client that could send it
 * through a forwarder would have the owner run a job of its making.
 */
export const INTERNAL_OP_HEADER = 'anvil-internal-op';
export const INTERNAL_HEADERS: ReadonlySet<string> = new Set([
  CLUSTER_SECRET_HEADER,
  CLIENT_ADDRESS_HEADER,
  PLACEMENT_EPOCH_HEADER,
  INTERNAL_OP_HEADER,
]);

/** On a forwarded bus call: the host of the calling API (a bus call names an API of its caller's host). */
export const CALLER_HOST_HEADER = 'anvil-caller-host';

/** On the answers of placed APIs: the id of the instance that ran the request (its owner). */
export const SERVED_BY_HEADER = 'x-anvil-served-by';

/** Headers of one connection (RFC 9110 §7.6.1): never passed on. Host, content-length and transfer-encoding are, as sent. */
const CONNECTION_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
]);

/** Raw [name, value, …] → what goes on to the next hop: without connection headers (and those `connection` names) nor `drop`. */
export function passedOn(
  raw: readonly string[],
  drop: ReadonlySet<string> = INTERNAL_HEADERS,
): Record<string, string | string[]> {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection')
      for (const token of raw[i + 1]!.split(',')) named.add(token.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!CONNECTION_HEADERS.has(name) && !named.has(name) && !drop.has(name)) kept.push(name, raw[i + 1]!);
  }
  return headerTable(kept);
}
