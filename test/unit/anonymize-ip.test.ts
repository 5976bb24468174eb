import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anonymizeIp, formatIpv6 } from '../../src/directives/support/anonymize-ip.js';

describe('anonymizeIp (AnonymizeIp)', () => {
  it('zeroes the last octet of an IPv4 address', () => {
    expect(anonymizeIp('203.0.113.57')).toBe('203.0.113.0');
    expect(anonymizeIp('10.1.2.0')).toBe('10.1.2.0');
    expect(anonymizeIp(' 192.168.7.255 ')).toBe('192.168.7.0');
  });

  it('keeps the first 48 bits of an IPv6 address', () => {
    expect(anonymizeIp('2001:0db8:85a3:08d3:1319:8a2e:0370:7348')).toBe('2001:db8:85a3::');
    expect(anonymizeIp('2001:DB8::1')).toBe('2001:db8::');
    expect(anonymizeIp('::1')).toBe('::');
    expect(anonymizeIp('fe80::1%eth0')).toBe('fe80::');
  });

  it('masks an IPv4-mapped IPv6 address as the IPv4 address it is', () => {
    expect(anonymizeIp('::ffff:203.0.113.57')).toBe('203.0.113.0');
    expect(anonymizeIp('::ffff:cb00:7139')).toBe('203.0.113.0');
  });

  it('gives null for anything that is not an address', () => {
    for (const bad of ['', 'localhost', '1.2.3', '1.2.3.256', '203.0.113.57:80', '2001:db8::g', '1.2.3.4/24'])
      expect(anonymizeIp(bad), bad).toBeNull();
  });

  it('masks every IPv4 and IPv6 address to an address of the same family with the low bits zero', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const masked = anonymizeIp(ip)!;
        expect(masked.split('.').slice(0, 3)).toEqual(
          ip
            .split('.')
            .slice(0, 3)
            .map((o) => String(Number(o))),
        );
        expect(masked.endsWith('.0')).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const masked = anonymizeIp(ip);
        expect(masked).not.toBeNull();
        expect(anonymizeIp(masked!)).toBe(masked); // zeroed bits stay zero: masking is idempotent
      }),
    );
  });

  it('writes IPv6 in RFC 5952 form', () => {
    expect(formatIpv6([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1])).toBe('2001:db8::1:0:0:1');
    expect(formatIpv6([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1])).toBe('2001:db8:0:1:1:1:1:1');
    expect(formatIpv6([0, 0, 0, 0, 0, 0, 0, 0])).toBe('::');
  });
});
