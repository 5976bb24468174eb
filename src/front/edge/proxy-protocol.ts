/**
 * PROXY protocol version 2 (HAProxy's proxy-protocol.txt, section 2.2): the binary header a load
 * balancer sends first on each connection with `send-proxy-v2`, carrying the client's address.
 * Only v2 is read: it is what HAProxy sends when told to, and it cannot be mistaken for HTTP.
 */

export const PROXY_V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

/** Address block plus TLVs: HAProxy sends a few hundred bytes at most; more is not a balancer. */
export const PROXY_V2_MAX_LENGTH = 16 + 1024;

export type ProxyHeader =
  /** More bytes are needed. */
  | { kind: 'incomplete' }
  | { kind: 'invalid'; reason: string }
  /** LOCAL (the balancer's own health check) or an address family without an IP: the socket's own peer counts. */
  | { kind: 'local'; length: number }
  | { kind: 'proxy'; length: number; address: string; port: number };

export function parseProxyV2(bytes: Buffer): ProxyHeader {
  const signatureBytes = Math.min(bytes.length, PROXY_V2_SIGNATURE.length);
  if (!bytes.subarray(0, signatureBytes).equals(PROXY_V2_SIGNATURE.subarray(0, signatureBytes))) {
    return { kind: 'invalid', reason: 'the connection did not start with a PROXY protocol v2 header' };
  }
  if (bytes.length < 16) return { kind: 'incomplete' };
  const version = bytes[12]! >> 4;
  const command = bytes[12]! & 0x0f;
  if (version !== 2) return { kind: 'invalid', reason: `PROXY protocol version ${version} (only 2 is read)` };
  if (command > 1) return { kind: 'invalid', reason: `PROXY protocol command ${command}` };
  const length = 16 + bytes.readUInt16BE(14);
  if (length > PROXY_V2_MAX_LENGTH) return { kind: 'invalid', reason: `PROXY protocol header of ${length} bytes` };
  if (bytes.length < length) return { kind: 'incomplete' };
  if (command === 0) return { kind: 'local', length };
  const family = bytes[13]! >> 4;
  if (family === 1) {
    if (length < 16 + 12) return { kind: 'invalid', reason: 'PROXY protocol IPv4 addresses cut short' };
    return { kind: 'proxy', length, address: [...bytes.subarray(16, 20)].join('.'), port: bytes.readUInt16BE(24) };
  }
  if (family === 2) {
    if (length < 16 + 36) return { kind: 'invalid', reason: 'PROXY protocol IPv6 addresses cut short' };
    return { kind: 'proxy', length, address: ipv6Text(bytes.subarray(16, 32)), port: bytes.readUInt16BE(48) };
  }
  // UNSPEC or AF_UNIX: no client IP to report.
  return { kind: 'local', length };
}

/** RFC 5952 text of 16 bytes; an IPv4-mapped address as its IPv4 form (as Anvil reports peers). */
function ipv6Text(raw: Buffer): string {
  const words = Array.from({ length: 8 }, (_, i) => raw.readUInt16BE(i * 2));
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return [...raw.subarray(12, 16)].join('.');
  let bestAt = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) [bestAt, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = words.map((w) => w.toString(16));
  if (bestAt < 0) return hex.join(':');
  return `${hex.slice(0, bestAt).join(':')}::${hex.slice(bestAt + bestLength).join(':')}`;
}
