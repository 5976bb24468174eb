import type { IncomingMessage } from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';

/**
 * The client's address as Anvil reports it (RateLimit, `ip`, logs, the metrics' loopback rule):
 * the address a PROXY protocol header gave for the connection, else the socket's peer; and when
 * that peer is a trusted proxy (`--trusted-proxy`), the right-most `x-forwarded-for` entry that is
 * not itself a trusted proxy (entries to its left are the client's own claims).
 */
export interface ClientAddresses {
  of(req: IncomingMessage): string;
}

/** Addresses read from PROXY headers, per connection (set by proxy-listener.ts). */
const proxiedPeers = new WeakMap<Socket, string>();

export function notePeerFromProxyHeader(socket: Socket, address: string): void {
  proxiedPeers.set(socket, address);
}

/** Per connection, not per request: `remoteAddress` asks the kernel each time it is read. */
const peers = new WeakMap<Socket, string>();

export function peerAddress(socket: Socket): string {
  let address = peers.get(socket);
  if (address === undefined) {
    address = proxiedPeers.get(socket) ?? bareAddress(socket.remoteAddress ?? '');
    peers.set(socket, address);
  }
  return address;
}

export function clientAddresses(trustedProxies: string | null): ClientAddresses {
  const trusted = parseTrustedProxies(trustedProxies);
  if (trusted === null) return { of: (req) => peerAddress(req.socket) };
  const isTrusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
  return {
    of(req) {
      const peer = peerAddress(req.socket);
      if (!isTrusted(peer)) return peer;
      const forwarded = req.headers['x-forwarded-for'];
      if (forwarded === undefined) return peer;
      // Repeated x-forwarded-for headers are one list (node joins them with ", ").
      const hops = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',');
      for (let i = hops.length - 1; i >= 0; i--) {
        const hop = bareAddress(hops[i]!.trim());
        if (isIP(hop) === 0) return peer;
        if (!isTrusted(hop)) return hop;
      }
      return peer;
    },
  };
}

/** `10.0.0.0/8, 192.168.1.7, fd00::/8` → a block list; null when empty. Throws on a malformed entry. */
export function parseTrustedProxies(list: string | null): BlockList | null {
  const trusted = new BlockList();
  let entries = 0;
  for (const raw of (list ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const [network, prefix, extra] = entry.split('/');
    const family = isIP(network ?? '');
    const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
    if (
      family === 0 ||
      extra !== undefined ||
      !Number.isInteger(bits) ||
      bits < 0 ||
      bits > (family === 4 ? 32 : 128)
    ) {
      throw new Error(`--trusted-proxy: "${entry}" is not an IP address or CIDR`);
    }
    trusted.addSubnet(network!, bits, family === 4 ? 'ipv4' : 'ipv6');
    entries++;
  }
  return entries === 0 ? null : trusted;
}

/** An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as its IPv4 form, as Anvil reports peers. */
export function bareAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
