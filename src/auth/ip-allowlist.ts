import { NetworkSet, parseCidr, type Cidr } from '../net/cidr.js';

/**
 * A queue's `ipAllowlist` (CIDRs; a bare address means just that address),
 * built once per cached queue view. An IPv4 client seen through a dual-stack
 * listener (::ffff:a.b.c.d) is checked as the IPv4 address it is.
 */
export class IpAllowlist {
  private readonly networks: NetworkSet;

  constructor(entries: readonly string[]) {
    // Entries were checked when saved; one that no longer parses allows nobody rather than failing the queue.
    this.networks = new NetworkSet(entries.map(parseAllowlistEntry).filter((n): n is Cidr => n !== null));
  }

  allows(address: string): boolean {
    return this.networks.has(address);
  }
}

/** An allowlist entry as typed: blanks around it are not part of it. Null when it is no address or CIDR. */
export function parseAllowlistEntry(entry: string): Cidr | null {
  return parseCidr(entry.trim());
}

/** The name the allowlist's parser had before src/net/cidr.ts took it over. */
export { parseAllowlistEntry as parseCidr };
