import { PROXY_V2_SIGNATURE } from '../../src/front/edge/proxy-protocol.js';

/** A PROXY v2 header as HAProxy's send-proxy-v2 writes it (TCP over IPv4 or IPv6), with optional TLV bytes. */
export function proxyV2Header(
  source: { v4?: number[]; v6?: number[]; port?: number } | 'local',
  tlv = Buffer.alloc(0),
): Buffer {
  if (source === 'local') return Buffer.concat([PROXY_V2_SIGNATURE, Buffer.from([0x20, 0x00, 0, tlv.length]), tlv]);
  const v6 = source.v6 !== undefined;
  const addresses = Buffer.alloc(v6 ? 36 : 12);
  (v6 ? source.v6! : source.v4!).forEach((b, i) => (addresses[i] = b));
  addresses.writeUInt16BE(source.port ?? 40000, v6 ? 32 : 8);
  addresses.writeUInt16BE(80, v6 ? 34 : 10);
  const length = addresses.length + tlv.length;
  return Buffer.concat([
    PROXY_V2_SIGNATURE,
    Buffer.from([0x21, v6 ? 0x21 : 0x11, length >> 8, length & 0xff]),
    addresses,
    tlv,
  ]);
}
