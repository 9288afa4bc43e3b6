import { BlockList, isIP } from 'node:net';

/**
 * The one place that reads IP addresses and CIDR ranges: queue allowlists,
 * trusted PROXY-protocol peers, the SSRF guard and config validation all
 * come through here.
 *
 * Matching is Node's BlockList (native, one lookup per check). On Node 20 it
 * treats an IPv4-mapped IPv6 address (::ffff:a.b.c.d, in any spelling: what a
 * dual-stack listener reports for an IPv4 client) as the IPv4 address it
 * carries, both ways: a v4 range holds ::ffff:10.0.0.1, a ::ffff:0:0/96 range
 * holds 10.0.0.1; test/unit/net/cidr.test.ts pins that. The other IPv6 forms
 * that carry an IPv4 host (compatible, NAT64, 6to4) are separate hosts to it;
 * whoever must see through them (the SSRF guard) asks embeddedV4 first.
 */

export type IpFamily = 'ipv4' | 'ipv6';

/** A network of one family; `prefix` is its length in bits. */
export interface Cidr {
  network: string;
  prefix: number;
  family: IpFamily;
}

/**
 * `10.0.0.0/8`, `2001:db8::/32`, or a bare address meaning just itself
 * (unless `bareAddress` is false); null when the text is none of these.
 * Host bits may be set (`10.1.2.3/8` is 10.0.0.0/8), as in most routers'
 * configs. No surrounding blanks: callers taking typed input trim first.
 */
export function parseCidr(text: string, options: { bareAddress?: boolean } = {}): Cidr | null {
  const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(text);
  if (!m) return null;
  const family = familyOf(m[1]!);
  if (family === null) return null;
  const max = family === 'ipv4' ? 32 : 128;
  if (m[2] === undefined && options.bareAddress === false) return null;
  const prefix = m[2] === undefined ? max : Number(m[2]);
  if (prefix > max) return null;
  return { network: m[1]!, prefix, family };
}

/** A fixed set of networks, built once, asked per address. */
export class NetworkSet {
  private readonly list = new BlockList();

  constructor(networks: Iterable<Cidr>) {
    for (const n of networks) this.list.addSubnet(n.network, n.prefix, n.family);
  }

  /** From CIDR texts that must all be valid (config, already checked at boot; fixed tables). */
  static parse(entries: readonly string[]): NetworkSet {
    return new NetworkSet(
      entries.map((entry) => {
        const cidr = parseCidr(entry);
        if (cidr === null) throw new Error(`not an IP address or CIDR: ${JSON.stringify(entry)}`);
        return cidr;
      }),
    );
  }

  /** True when `address` (a literal IPv4 or IPv6 address) is in one of the networks; false for anything else. */
  has(address: string): boolean {
    const family = familyOf(address);
    return family !== null && this.list.check(address, family);
  }
}

/** The family of a literal address, or null when the text is not one. */
export function familyOf(address: string): IpFamily | null {
  const family = isIP(address);
  return family === 4 ? 'ipv4' : family === 6 ? 'ipv6' : null;
}

/**
 * The IPv4 address inside an IPv6 address that carries one, however it is
 * spelled: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96, but not :: or
 * ::1), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16). Such an address reaches the embedded IPv4 host. Null for
 * anything else, IPv4 addresses included.
 */
export function embeddedV4(address: string): string | null {
  const h = ipv6Groups(address);
  if (!h) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => h.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (h[5] === 0xffff || h[5] === 0) && !(h[5] === 0 && h[6] === 0)) return v4(h[6]!, h[7]!);
  if (zeros(0, 4) && h[4] === 0xffff && h[5] === 0) return v4(h[6]!, h[7]!);
  if (h[0] === 0x64 && h[1] === 0xff9b && zeros(2, 6)) return v4(h[6]!, h[7]!);
  if (h[0] === 0x2002) return v4(h[1]!, h[2]!);
  return null;
}

/** The address in network byte order (4 or 16 bytes), or null when it is not a literal address. */
export function addressBytes(address: string): Buffer | null {
  const family = familyOf(address);
  if (family === 'ipv4') return Buffer.from(address.split('.').map(Number));
  const groups = family === 'ipv6' ? ipv6Groups(address) : null;
  if (!groups) return null;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** The eight 16-bit groups of a valid IPv6 address (dotted IPv4 tail and zone allowed), or null. */
function ipv6Groups(address: string): number[] | null {
  if (familyOf(address) !== 'ipv6') return null;
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((x) => parseInt(x, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}
