import { isIP } from 'node:net';

/**
 * The client a connection is counted under for the connection bounds: an IPv4 address as it is
 * (an IPv4-mapped IPv6 one as its IPv4 address), an IPv6 address as its /64. One subscriber, one
 * host or one ISP customer gets a whole /64, so counting each /128 apart would give one attacker
 * as many shares as it likes.
 */
export function clientGroup(address: string): string {
  if (!address.includes(':')) return address;
  if (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) return address.slice(7);
  const zone = address.indexOf('%');
  const bare = zone < 0 ? address : address.slice(0, zone);
  const gap = bare.indexOf('::');
  const head = groups(gap < 0 ? bare : bare.slice(0, gap));
  const tail = gap < 0 ? [] : groups(bare.slice(gap + 2));
  const all =
    gap < 0 ? head : [...head, ...Array<string>(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail];
  const prefix = all.slice(0, 4).map((g) => parseInt(g, 16).toString(16));
  return prefix.length === 4 && prefix.every((g) => g !== 'NaN') ? `${prefix.join(':')}::/64` : address;
}

/** The 16-bit groups of one side of `::` (a dotted IPv4 tail counts as two). */
function groups(side: string): string[] {
  if (side === '') return [];
  return side.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
}
