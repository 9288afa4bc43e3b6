import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { ServiceError } from '../errors.js';

/**
 * Refuses delivery to addresses inside the operator's own network: loopback,
 * private, CGNAT, link-local (cloud metadata), unique-local, multicast and
 * reserved ranges, unless the operator's config allows a network. Checked on
 * every resolved address, at save and again at connect (DNS can change).
 */
const BLOCKED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const BLOCKED_V6: Array<[string, number]> = [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['100::', 64],
];

export class SsrfGuard {
  private readonly blocked = new BlockList();
  private readonly allowed = new BlockList();
  /** Verdicts by address: the networks are fixed at boot, and BlockList.check allocates per call. */
  private readonly verdicts = new Map<string, boolean>();

  constructor(allowNetworks: readonly string[]) {
    for (const [net, prefix] of BLOCKED_V4) this.blocked.addSubnet(net, prefix, 'ipv4');
    for (const [net, prefix] of BLOCKED_V6) this.blocked.addSubnet(net, prefix, 'ipv6');
    for (const cidr of allowNetworks) {
      const [net, prefix] = cidr.split('/') as [string, string];
      const family = isIP(net) === 6 ? 'ipv6' : 'ipv4';
      this.allowed.addSubnet(net, Number(prefix), family);
    }
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
    const family = isIP(address);
    if (family === 0) return false;
    const embedded = family === 6 ? embeddedV4(address) : null;
    if (embedded) return this.judge(embedded);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    return this.allowed.check(address, type) || !this.blocked.check(address, type);
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

/**
 * The IPv4 address inside an IPv6 address that carries one, however it is
 * spelled: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), NAT64
 * (64:ff9b::/96) and 6to4 (2002::/16). Such an address reaches the embedded
 * IPv4 host, so it must be judged as that host.
 */
function embeddedV4(address: string): string | null {
  const h = expandV6(address);
  if (!h) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => h.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (h[5] === 0xffff || h[5] === 0) && !(h[5] === 0 && h[6] === 0)) return v4(h[6]!, h[7]!);
  if (zeros(0, 4) && h[4] === 0xffff && h[5] === 0) return v4(h[6]!, h[7]!); // IPv4-translated (SIIT)
  if (h[0] === 0x64 && h[1] === 0xff9b && zeros(2, 6)) return v4(h[6]!, h[7]!);
  if (h[0] === 0x2002) return v4(h[1]!, h[2]!);
  return null;
}

/** The eight 16-bit groups of an IPv6 address (dotted IPv4 tail allowed), or null. */
function expandV6(address: string): number[] | null {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((x) => parseInt(x, 16)));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? head.length !== 8 : fill < 0) return null;
  const groups = [...head, ...Array<number>(Math.max(0, fill)).fill(0), ...tail];
  return groups.some((g) => Number.isNaN(g)) ? null : groups;
}
