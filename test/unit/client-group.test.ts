import { describe, expect, it } from 'vitest';
import { clientGroup } from '../../src/front/edge/client-group.js';

describe('clientGroup', () => {
  it('keeps an IPv4 address, and an IPv4-mapped IPv6 one as its IPv4 address', () => {
    expect(clientGroup('203.0.113.7')).toBe('203.0.113.7');
    expect(clientGroup('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('groups an IPv6 address by its /64, however it is written', () => {
    expect(clientGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientGroup('2001:0db8:0000:0000:ffff::2')).toBe('2001:db8:0:0::/64');
    expect(clientGroup('2001:db8:0:1::1')).toBe('2001:db8:0:1::/64');
    expect(clientGroup('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientGroup('::1')).toBe('0:0:0:0::/64');
    expect(clientGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});
