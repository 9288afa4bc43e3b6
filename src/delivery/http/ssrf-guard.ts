import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { ServiceError } from '../../errors.js';
import { embeddedV4, familyOf, NetworkSet } from '../../net/cidr.js';

/**
 * Refuses delivery to addresses inside the operator's own network: loopback,
 * private, CGNAT, link-local (cloud metadata), unique-local, multicast and
 * reserved ranges, unless the operator's config allows a network. Checked on
 * every resolved address, at save and again at connect (DNS can change).
 */
const BLOCKED = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12',
  '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4',
  '::/128', '::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8', '100::/64',
];

export class SsrfGuard {
  private readonly blocked = NetworkSet.parse(BLOCKED);
  private readonly allowed: NetworkSet;
  /** Verdicts by address: the networks are fixed at boot, and BlockList.check allocates per call. */
  private readonly verdicts = new Map<string, boolean>();

  constructor(allowNetworks: readonly string[]) {
    this.allowed = NetworkSet.parse(allowNetworks);
  }

  /** True when delivery may connect to this literal address. */
  isAllowed(address: string): boolean {
    let verdict = this.verdicts.get(address);
    if (verdict === undefined) {
      verdict = this.judge(address);
      if (this.verdicts.size >= 10_000) this.verdicts.clear();
      this.verdicts.set(address, verdict);
    }
    return verdict;
  }

  private judge(address: string): boolean {
    if (familyOf(address) === null) return false;
    // An IPv6 address that carries an IPv4 host reaches that host: judge it as that host.
    const host = embeddedV4(address) ?? address;
    return this.allowed.has(host) || !this.blocked.has(host);
  }

  /** Checks a target URL at save time: scheme, and every address its host resolves to. */
  async checkUrl(raw: string): Promise<void> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ServiceError('validation_failed', 'url is not a valid URL', [{ field: 'url', problem: 'not a valid URL' }]);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ServiceError('validation_failed', 'url must be http or https', [{ field: 'url', problem: 'scheme must be http or https' }]);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [host] : await resolveAll(host);
    const refused = addresses.filter((a) => !this.isAllowed(a));
    if (addresses.length === 0 || refused.length > 0) {
      throw new ServiceError('validation_failed', `url resolves to an address delivery may not reach (${refused.join(', ') || 'none'})`, [
        { field: 'url', problem: 'resolves to a loopback, private, link-local or otherwise refused address' },
      ]);
    }
  }

  /** A dns.lookup replacement for http agents: connects only to allowed addresses. */
  readonly lookup = (
    hostname: string,
    options: object,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !this.isAllowed(a.address));
      if (refused || list.length === 0) {
        const e: NodeJS.ErrnoException = new Error(`refused address ${refused?.address ?? '(none)'} for ${hostname}`);
        e.code = 'ESSRF';
        return callback(e, '');
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve) => {
    dnsLookup(host, { all: true }, (err, addresses) => resolve(err ? [] : addresses.map((a) => a.address)));
  });
}
