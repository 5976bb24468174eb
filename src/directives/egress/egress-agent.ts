import { lookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { createRequire } from 'node:module';
import type { Agent } from 'undici';
import { Errors } from '../../shared/errors.js';
import type { EgressPolicy } from './egress-policy.js';
import { embeddedIpv4 } from './embedded-ipv4.js';

const require = createRequire(import.meta.url);
let undiciModule: typeof import('undici') | null = null;

/**
 * undici, loaded on first use: most APIs make no outgoing request, and loading it takes ~90 ms of
 * CPU in every new thread.
 */
export function undici(): typeof import('undici') {
  return (undiciModule ??= require('undici') as typeof import('undici'));
}

export const egressDenied = (host: string, address: string) => Errors.egressDenied(host, address, carried(address));

/** Names the IPv4 address behind an IPv6 form, so a refusal of `2002:7f00:1::` explains itself. */
function carried(address: string): string {
  const embedded = embeddedIpv4(address);
  return embedded.length === 0
    ? ''
    : `; ${address} carries ${embedded.map((e) => `${e.ipv4} (${e.form})`).join(' and ')}`;
}

/**
 * An undici Agent whose connections pass the egress policy: names are resolved here and every
 * address they resolve to must be allowed (so DNS cannot smuggle in 127.0.0.1); literal addresses
 * are checked as they are. Redirects are never followed by the callers.
 */
export function egressAgent(policy: EgressPolicy, options: { connectTimeoutMs: number }): Agent {
  const checkedLookup: LookupFunction = (hostname, opts, callback) => {
    lookup(hostname, { ...opts, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as LookupAddress[];
      if (!policy.allowsName(hostname)) {
        const refused = list.find((a) => !policy.allowsAddress(a.address));
        if (refused !== undefined)
          return callback(egressDenied(hostname, refused.address) as unknown as NodeJS.ErrnoException, '', 0);
      }
      if ((opts as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (first === undefined) return callback(new Error(`${hostname} has no address`) as NodeJS.ErrnoException, '', 0);
      callback(null, first.address, first.family);
    });
  };
  return new (undici().Agent)({
    connect: { lookup: checkedLookup, timeout: options.connectTimeoutMs },
    keepAliveTimeout: 4_000,
  });
}

/** Literal addresses skip DNS: check them before connecting. */
export function checkLiteralHost(policy: EgressPolicy, hostname: string): void {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(bare) !== 0 && !policy.allowsName(bare) && !policy.allowsAddress(bare)) throw egressDenied(hostname, bare);
}
