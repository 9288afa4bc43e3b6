import { BlockList, isIP } from 'node:net';

/**
 * A queue's `ipAllowlist` (CIDRs; a bare address means just that address).
 * Built once per cached queue view with node's BlockList, so a check is one
 * native lookup. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d, what a dual-stack
 * listener reports for IPv4 clients) are checked as the IPv4 address they carry.
 */
export class IpAllowlist {
  private readonly list = new BlockList();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const parsed = parseCidr(entry);
      if (parsed) this.list.addSubnet(parsed.network, parsed.prefix, parsed.family);
    }
  }

  allows(address: string): boolean {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const plain = mapped ? mapped[1]! : address;
    const family = isIP(plain);
    if (family === 0) return false;
    return this.list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** `10.0.0.0/8`, `2001:db8::/32` or a bare address; null when it is neither. */
export function parseCidr(entry: string): { network: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const m = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(entry.trim());
  if (!m) return null;
  const family = isIP(m[1]!);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  const prefix = m[2] === undefined ? max : Number(m[2]);
  if (prefix > max) return null;
  return { network: m[1]!, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}
