import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddresses, parseTrustedProxies } from '../../src/front/edge/client-address.js';

function request(peer: string, forwardedFor?: string): IncomingMessage {
  return {
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as unknown as IncomingMessage;
}

describe('the client address behind trusted proxies', () => {
  it('is the peer when no proxy is trusted, whatever x-forwarded-for says', () => {
    expect(clientAddresses(null).of(request('::ffff:192.0.2.5', '1.2.3.4'))).toBe('192.0.2.5');
  });

  it('takes the right-most x-forwarded-for entry that is not a trusted proxy', () => {
    const addresses = clientAddresses('10.0.0.0/8, 127.0.0.1');
    // The client claims 6.6.6.6; the edge proxy 10.1.1.1 saw 198.51.100.9.
    expect(addresses.of(request('127.0.0.1', '6.6.6.6, 198.51.100.9, 10.1.1.1'))).toBe('198.51.100.9');
    expect(addresses.of(request('127.0.0.1', '::ffff:203.0.113.1'))).toBe('203.0.113.1');
    expect(addresses.of(request('127.0.0.1'))).toBe('127.0.0.1');
    // Only trusted hops in the list: the left-most proxy is the best we know.
    expect(addresses.of(request('127.0.0.1', '10.2.2.2'))).toBe('127.0.0.1');
    // A malformed entry ends the walk: nothing left of it can be believed.
    expect(addresses.of(request('127.0.0.1', '198.51.100.9, nonsense'))).toBe('127.0.0.1');
  });

  it('ignores x-forwarded-for from a peer that is not trusted', () => {
    expect(clientAddresses('10.0.0.0/8').of(request('192.0.2.77', '1.2.3.4'))).toBe('192.0.2.77');
  });

  it('refuses a malformed --trusted-proxy entry with its text', () => {
    expect(() => parseTrustedProxies('10.0.0.0/8, 300.1.1.1')).toThrow('"300.1.1.1" is not an IP address or CIDR');
    expect(() => parseTrustedProxies('fd00::/129')).toThrow('"fd00::/129"');
    expect(parseTrustedProxies(' , ')).toBeNull();
  });
});
