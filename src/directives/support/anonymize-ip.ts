import { isIP } from 'node:net';
import { ipv6Words } from '../egress/embedded-ipv4.js';

/**
 * AnonymizeIp's masking, as Google Analytics does it: an IPv4 address loses its last octet
 * (`203.0.113.57` → `203.0.113.0`), an IPv6 address its last 80 bits (the first 48 stay:
 * `2001:db8:85a3:8d3:1319:8a2e:370:7348` → `2001:db8:85a3::`). An IPv4-mapped IPv6 address
 * (`::ffff:203.0.113.57`) is masked as the IPv4 address it is. Anything else is null.
 */
export function anonymizeIp(value: string): string | null {
  const text = value.trim();
  const bare = text.split('%')[0]!; // a zone id (fe80::1%eth0) names an interface of the host, not the client
  const family = isIP(bare);
  if (family === 4) return maskIpv4(bare);
  if (family !== 6) return null;
  const words = ipv6Words(bare)!;
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return maskIpv4(`${words[6]! >> 8}.${words[6]! & 0xff}.${words[7]! >> 8}.${words[7]! & 0xff}`);
  }
  return formatIpv6([words[0]!, words[1]!, words[2]!, 0, 0, 0, 0, 0]);
}

function maskIpv4(address: string): string {
  return `${address.slice(0, address.lastIndexOf('.'))}.0`;
}

/** RFC 5952 text: lower-case hex without leading zeros, the longest run of two or more zero words as `::`. */
export function formatIpv6(words: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < words.length;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < words.length && words[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
