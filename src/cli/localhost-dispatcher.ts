import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';

/** `localhost` and every name under `.localhost` (RFC 6761 §6.3), with or without a final dot. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Resolves `localhost` and `*.localhost` to 127.0.0.1 without asking DNS or /etc/hosts, as browsers
 * and curl do (RFC 6761: such names are loopback). Other names go to the system resolver.
 */
export const localhostLookup: LookupFunction = (hostname, options, callback) => {
  if (!isLocalhostName(hostname)) {
    (dnsLookup as unknown as LookupFunction)(hostname, options, callback);
    return;
  }
  if ((options as { all?: boolean }).all === true) {
    (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  } else {
    callback(null, '127.0.0.1', 4);
  }
};

/**
 * The dispatcher of every HTTP call the CLI makes: the URL (and so the Host header) stays
 * `http://admin.localhost:8080/…`, only the connection goes to 127.0.0.1. Close it when done.
 */
export function localhostAgent(): Agent {
  return new Agent({
    connect: { lookup: localhostLookup, timeout: 10_000 },
    keepAliveTimeout: 1_000,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
}
