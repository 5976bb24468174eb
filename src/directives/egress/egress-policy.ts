import { BlockList, isIP } from 'node:net';
import { embeddedIpv4 } from './embedded-ipv4.js';

/**
 * Where outgoing Http/Pull may connect (SPEC §9, SECURITY.md point 3): public addresses only, unless
 * `ANVIL_EGRESS_ALLOW` names a host, an address or a CIDR. Addresses are checked after DNS
 * resolution, so a public-looking name that resolves to 127.0.0.1 is refused too. An IPv6 address
 * that carries an IPv4 address (IPv4-mapped, 6to4, NAT64, Teredo, …; see embedded-ipv4.ts) is judged
 * as the IPv4 address it carries, allow list included: allowing 10.1.0.0/16 allows ::ffff:10.1.2.3
 * too. An IPv6 entry of the allow list (e.g. a NAT64 prefix) allows its addresses as they are.
 */
export interface EgressPolicy {
  /** True when `hostname` is named in the allow list as such (then any address it resolves to is fine). */
  allowsName(hostname: string): boolean;
  /** True when a connection to this resolved address is allowed. */
  allowsAddress(address: string): boolean;
}

/**
 * Private, loopback, link-local (cloud metadata), unspecified, shared and multicast ranges. The IPv6
 * forms that embed an IPv4 address are not listed: they are judged by the address they embed.
 */
const DENIED: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  // Site-local: deprecated, but still routed inside some networks as a private range.
  ['fec0::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

export function egressPolicy(allow: string | undefined): EgressPolicy {
  const denied = new BlockList();
  for (const [network, prefix, family] of DENIED) denied.addSubnet(network, prefix, family);
  const allowed = new BlockList();
  const names = new Set<string>();
  for (const raw of (allow ?? '').split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    const [network, prefix] = entry.split('/');
    const family = isIP(network ?? '');
    if (family === 0) {
      if (prefix !== undefined)
        throw new Error(`ANVIL_EGRESS_ALLOW: "${raw.trim()}" is neither a host name nor an address or CIDR`);
      names.add(entry);
    } else if (prefix === undefined) {
      allowed.addAddress(network!, family === 4 ? 'ipv4' : 'ipv6');
    } else {
      const bits = Number(prefix);
      if (!Number.isInteger(bits) || bits < 0 || bits > (family === 4 ? 32 : 128))
        throw new Error(`ANVIL_EGRESS_ALLOW: bad prefix in "${raw.trim()}"`);
      allowed.addSubnet(network!, bits, family === 4 ? 'ipv4' : 'ipv6');
    }
  }
  const allowsIpv4 = (address: string) => allowed.check(address, 'ipv4') || !denied.check(address, 'ipv4');
  return {
    allowsName: (hostname) => names.has(hostname.toLowerCase()),
    allowsAddress: (address) => {
      const bare = address.split('%')[0]!;
      const family = isIP(bare);
      if (family === 4) return allowsIpv4(bare);
      if (family !== 6) return false;
      if (allowed.check(bare, 'ipv6')) return true;
      if (denied.check(bare, 'ipv6')) return false;
      return embeddedIpv4(bare).every((embedded) => allowsIpv4(embedded.ipv4));
    },
  };
}
