import type { IncomingMessage } from 'node:http';
import type { PublicHost } from '../../deploy/registry/registry.js';
import { safeEqual } from '../../shared/security/safe-equal.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';

/**
 * Admin-host credentials (SPEC §6): `public-host` names a public host and `public-host-key` is its
 * key, compared in constant time. Returns the public host acted for, or null (→ 401).
 */
export function authenticateAdmin(req: IncomingMessage, directory: ApiDirectory): PublicHost | null {
  const name = req.headers['public-host'];
  const key = req.headers['public-host-key'];
  if (typeof name !== 'string' || typeof key !== 'string') return null;
  const host = directory.host(name.toLowerCase());
  if (host === undefined || host.kind !== 'public') {
    safeEqual('no such host', key); // same work either way: the answer does not reveal which hosts exist
    return null;
  }
  return safeEqual(host.key, key) ? host : null;
}

/** The host name of a request, lower-cased, without port. */
export function hostOf(header: string | undefined): string {
  if (header === undefined) return '';
  let host = header;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return host.slice(0, end + 1).toLowerCase();
  }
  const colon = host.indexOf(':');
  if (colon >= 0) host = host.slice(0, colon);
  return host.toLowerCase();
}
