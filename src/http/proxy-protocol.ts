// The PROXY protocol header (HAProxy's spec, versions 1 and 2) a load balancer puts first on a connection.
import { isIPv6 } from 'node:net';

/**
 *   v1: "PROXY TCP4 <src> <dst> <sport> <dport>\r\n"  (text, at most 107 bytes; TCP6, or UNKNOWN …)
 *   v2: \r\n\r\n\0\r\nQUIT\n | ver/cmd | fam/proto | len (16 bits) | addresses | TLVs
 *       ver/cmd 0x21 PROXY, 0x20 LOCAL (the balancer's own check: no client);
 *       fam 0x11 TCP over IPv4 (4+4+2+2 bytes), 0x21 TCP over IPv6 (16+16+2+2)
 *
 * Read only on connections from `server.proxyProtocolFrom`, where it is required:
 * a balancer configured to send it always does, and a connection from there
 * without one could carry a client's own bytes. From anyone else the bytes
 * are a request like any other (and the parser refuses them).
 */
export type ProxyHeader =
  /** Not enough bytes yet to tell. */
  | { kind: 'more' }
  /** `length` bytes of header; the client's address, or null for LOCAL / UNKNOWN (the peer is the client). */
  | { kind: 'header'; length: number; address: string | null }
  | { kind: 'invalid'; reason: string };

const V1_PREFIX = Buffer.from('PROXY ');
const V1_MAX = 107;
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** Addresses and TLVs: a balancer sends a few hundred bytes at most. */
const V2_MAX_BODY = 4096;

const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const V1_PORT = '(0|[1-9][0-9]{0,4})';
const V1_LINE = /^PROXY (?:UNKNOWN(?: [ -~]*)?|(TCP4|TCP6) (\S+) (\S+) (\S+) (\S+))$/;
const PORT = new RegExp(`^${V1_PORT}$`);
const DOTTED = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);

/** Reads the header at the start of `buf` (the connection's first bytes, gathered). */
export function readProxyHeader(buf: Buffer): ProxyHeader {
  if (startsLike(buf, V2_SIGNATURE)) {
    if (buf.length < V2_SIGNATURE.length) return { kind: 'more' };
    return readV2(buf);
  }
  if (startsLike(buf, V1_PREFIX)) {
    if (buf.length < V1_PREFIX.length) return { kind: 'more' };
    return readV1(buf);
  }
  return { kind: 'invalid', reason: 'A connection from this address must begin with a PROXY protocol header.' };
}

/** `buf` and `prefix` agree on the bytes both have. */
function startsLike(buf: Buffer, prefix: Buffer): boolean {
  const n = Math.min(buf.length, prefix.length);
  return buf.compare(prefix, 0, n, 0, n) === 0;
}

function readV1(buf: Buffer): ProxyHeader {
  const lf = buf.indexOf(0x0a);
  if (lf === -1) return buf.length >= V1_MAX ? { kind: 'invalid', reason: 'The PROXY v1 header is too long.' } : { kind: 'more' };
  if (lf + 1 > V1_MAX || buf[lf - 1] !== 0x0d) return { kind: 'invalid', reason: 'The PROXY v1 header does not end in CRLF within 107 bytes.' };
  const match = V1_LINE.exec(buf.toString('latin1', 0, lf - 1));
  if (!match) return { kind: 'invalid', reason: 'The PROXY v1 header is malformed.' };
  if (match[1] === undefined) return { kind: 'header', length: lf + 1, address: null };
  const [, family, source, destination, sourcePort, destinationPort] = match;
  const valid = family === 'TCP4' ? (a: string) => DOTTED.test(a) : (a: string) => isIPv6(a) && !a.includes('%');
  if (!valid(source!) || !valid(destination!) || !validPort(sourcePort!) || !validPort(destinationPort!)) {
    return { kind: 'invalid', reason: `The PROXY v1 header's ${family} addresses or ports are malformed.` };
  }
  return { kind: 'header', length: lf + 1, address: source! };
}

function validPort(text: string): boolean {
  return PORT.test(text) && Number(text) <= 65535;
}

function readV2(buf: Buffer): ProxyHeader {
  if (buf.length < 16) return { kind: 'more' };
  const versionCommand = buf[12]!;
  if (versionCommand >> 4 !== 2) return { kind: 'invalid', reason: 'The PROXY v2 header has an unknown version.' };
  const command = versionCommand & 0x0f;
  if (command > 1) return { kind: 'invalid', reason: 'The PROXY v2 header has an unknown command.' };
  const size = buf.readUInt16BE(14);
  if (size > V2_MAX_BODY) return { kind: 'invalid', reason: 'The PROXY v2 header is too long.' };
  if (buf.length < 16 + size) return { kind: 'more' };
  const length = 16 + size;
  // LOCAL: the balancer speaking for itself (a health check); whatever follows is ignored.
  if (command === 0) return { kind: 'header', length, address: null };
  const family = buf[13]!;
  switch (family) {
    case 0x11: // TCP over IPv4
    case 0x12: // UDP over IPv4
      if (size < 12) return { kind: 'invalid', reason: 'The PROXY v2 header is too short for IPv4 addresses.' };
      return { kind: 'header', length, address: `${buf[16]}.${buf[17]}.${buf[18]}.${buf[19]}` };
    case 0x21: // TCP over IPv6
    case 0x22: {
      if (size < 36) return { kind: 'invalid', reason: 'The PROXY v2 header is too short for IPv6 addresses.' };
      return { kind: 'header', length, address: ipv6Text(buf.subarray(16, 32)) };
    }
    case 0x00: // UNSPEC
    case 0x31: // Unix stream socket
    case 0x32: // Unix datagram socket
      // No IP address to tell; the peer stands for the client.
      return { kind: 'header', length, address: null };
    default:
      // The spec: other family/protocol values "must be rejected as invalid by receivers"
      // (they were taken as UNSPEC before; a header this garbled may be garbled elsewhere too).
      return { kind: 'invalid', reason: 'The PROXY v2 header has an unknown address family or protocol.' };
  }
}

/** An IPv6 address's text; an IPv4-mapped one (::ffff:a.b.c.d) as its IPv4 form, as allowlists read it. */
function ipv6Text(bytes: Buffer): string {
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  // The URL serializer writes the canonical form (RFC 5952: the first longest run of zero groups
  // as `::`, lower case), the one Node gives socket addresses in.
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
