import { isIP } from 'node:net';

/** The IPv6 forms that carry an IPv4 address, named as in their RFCs. */
export type EmbeddingForm =
  | 'IPv4-mapped'
  | 'IPv4-compatible'
  | 'IPv4-translated'
  | '6to4'
  | 'NAT64'
  | 'NAT64 local-use'
  | 'Teredo client'
  | 'Teredo server';

export interface EmbeddedIpv4 {
  form: EmbeddingForm;
  /** Dotted quad. */
  ipv4: string;
}

/**
 * Every IPv4 address an IPv6 address carries, by the form that carries it. A packet sent to such
 * an address may be delivered to the IPv4 address (by the kernel, a 6to4 or Teredo relay, a NAT64
 * gateway), so the egress policy judges them as that IPv4 address. Teredo carries two: the client
 * (where the relay delivers) and the server; both are returned. Anything else, including an
 * address that is not IPv6, gives an empty list.
 *
 * The local-use NAT64 prefix 64:ff9b:1::/48 is read as a /96 NAT64 prefix (the address in the last
 * 32 bits): the prefix length a network chose is not visible in the address.
 */
export function embeddedIpv4(address: string): EmbeddedIpv4[] {
  const w = ipv6Words(address);
  if (w === null) return [];
  const zero = (from: number, to: number) => w.slice(from, to).every((word) => word === 0);
  const tail = () => dotted(w[6]!, w[7]!);

  if (zero(0, 5) && w[5] === 0xffff) return [{ form: 'IPv4-mapped', ipv4: tail() }];
  if (zero(0, 4) && w[4] === 0xffff && w[5] === 0) return [{ form: 'IPv4-translated', ipv4: tail() }];
  // :: and ::1 are the unspecified and loopback addresses themselves, not compatible forms.
  if (zero(0, 6) && !(w[6] === 0 && w[7]! <= 1)) return [{ form: 'IPv4-compatible', ipv4: tail() }];
  if (w[0] === 0x2002) return [{ form: '6to4', ipv4: dotted(w[1]!, w[2]!) }];
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) return [{ form: 'NAT64', ipv4: tail() }];
  if (w[0] === 0x64 && w[1] === 0xff9b && w[2] === 1) return [{ form: 'NAT64 local-use', ipv4: tail() }];
  if (w[0] === 0x2001 && w[1] === 0) {
    return [
      // The client's address is stored with every bit flipped (RFC 4380 §4).
      { form: 'Teredo client', ipv4: dotted(~w[6]! & 0xffff, ~w[7]! & 0xffff) },
      { form: 'Teredo server', ipv4: dotted(w[2]!, w[3]!) },
    ];
  }
  return [];
}

/**
 * The eight 16-bit words of an IPv6 address: `::` expanded, a dotted IPv4 tail turned into two
 * words, a zone id (`%eth0`) dropped, any case. Null when it is not an IPv6 address.
 */
export function ipv6Words(address: string): number[] | null {
  const bare = address.split('%')[0]!;
  if (isIP(bare) !== 6) return null;
  let text = bare.toLowerCase();
  const dot = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dot !== null) {
    const [a, b, c, d] = dot.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dot.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = groups(head);
  if (rest === undefined) return front;
  const back = groups(rest);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function dotted(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}
