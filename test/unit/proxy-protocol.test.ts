import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROXY_V2_SIGNATURE, parseProxyV2 } from '../../src/front/edge/proxy-protocol.js';
import { proxyV2Header } from '../helpers/proxy-header.js';

describe('PROXY protocol v2 header', () => {
  it('reads the client of a TCP/IPv4 header and where the HTTP bytes start', () => {
    const header = proxyV2Header({ v4: [203, 0, 113, 7], port: 5555 });
    const bytes = Buffer.concat([header, Buffer.from('GET / HTTP/1.1\r\n')]);
    expect(parseProxyV2(bytes)).toEqual({ kind: 'proxy', length: header.length, address: '203.0.113.7', port: 5555 });
  });

  it('writes IPv6 clients in RFC 5952 form and IPv4-mapped ones as IPv4', () => {
    const v6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    expect(parseProxyV2(proxyV2Header({ v6 }))).toMatchObject({ address: '2001:db8::1' });
    const mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100, 9];
    expect(parseProxyV2(proxyV2Header({ v6: mapped }))).toMatchObject({ address: '198.51.100.9' });
    const noZeroRun = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6];
    expect(parseProxyV2(proxyV2Header({ v6: noZeroRun }))).toMatchObject({ address: '2001:db8:1:2:3:4:5:6' });
  });

  it('skips TLVs and treats LOCAL (a balancer health check) as no client address', () => {
    const tlv = Buffer.from([0x04, 0x00, 0x02, 0xab, 0xcd]);
    const withTlv = proxyV2Header({ v4: [10, 0, 0, 1] }, tlv);
    expect(parseProxyV2(withTlv)).toMatchObject({ kind: 'proxy', length: withTlv.length, address: '10.0.0.1' });
    expect(parseProxyV2(proxyV2Header('local', tlv))).toEqual({ kind: 'local', length: 16 + tlv.length });
  });

  it('asks for more bytes at every cut of a valid header, and refuses anything else', () => {
    const header = proxyV2Header({ v4: [192, 0, 2, 1] });
    for (let cut = 0; cut < header.length; cut++) expect(parseProxyV2(header.subarray(0, cut)).kind).toBe('incomplete');
    expect(parseProxyV2(Buffer.from('GET / HTTP/1.1\r\n'))).toMatchObject({ kind: 'invalid' });
    expect(parseProxyV2(Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n'))).toMatchObject({ kind: 'invalid' });
    const v1Version = Buffer.from(header);
    v1Version[12] = 0x11;
    expect(parseProxyV2(v1Version)).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('version 1') });
    const huge = Buffer.from(header);
    huge.writeUInt16BE(60_000, 14);
    expect(parseProxyV2(huge)).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('60016 bytes') });
    const short = Buffer.concat([PROXY_V2_SIGNATURE, Buffer.from([0x21, 0x11, 0, 4, 1, 2, 3, 4])]);
    expect(parseProxyV2(short)).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('cut short') });
  });

  it('never throws, whatever the bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.boolean(), (tail, signed) => {
        const bytes = signed ? Buffer.concat([PROXY_V2_SIGNATURE, tail]) : Buffer.from(tail);
        const header = parseProxyV2(bytes);
        if (header.kind === 'proxy' || header.kind === 'local') expect(header.length).toBeLessThanOrEqual(bytes.length);
      }),
      { numRuns: 2000 },
    );
  });
});
