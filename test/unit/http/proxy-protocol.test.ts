import t from 'tap';
import { SocketAddress } from 'node:net';
import { readProxyHeader, type ProxyHeader } from '../../../src/http/proxy-protocol.js';

/**
 * readProxyHeader, the first bytes of a connection from a trusted balancer:
 * both versions, every family and command, input cut anywhere ('more'), and
 * everything malformed refused ('invalid'), since what it names becomes the
 * client's address for IP allowlists.
 */

const SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const REQUEST = Buffer.from('GET / HTTP/1.1\r\nhost: x\r\n\r\n');

/** A v2 header: version/command byte, family/protocol byte, then the address block (and TLVs) as given. */
function v2(versionCommand: number, family: number, body: Buffer, declared = body.length): Buffer {
  const fixed = Buffer.alloc(4);
  fixed[0] = versionCommand;
  fixed[1] = family;
  fixed.writeUInt16BE(declared, 2);
  return Buffer.concat([SIGNATURE, fixed, body]);
}

/** The address block of TCP over IPv4: source, destination, source port, destination port. */
function ipv4Block(source: number[], destination = [10, 0, 0, 1], ports: [number, number] = [40_000, 443]): Buffer {
  const block = Buffer.alloc(12);
  Buffer.from(source).copy(block, 0);
  Buffer.from(destination).copy(block, 4);
  block.writeUInt16BE(ports[0], 8);
  block.writeUInt16BE(ports[1], 10);
  return block;
}

/** The address block of TCP over IPv6, from the 8 groups of each address. */
function ipv6Block(source: number[], destination = [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]): Buffer {
  const block = Buffer.alloc(36);
  source.forEach((g, i) => block.writeUInt16BE(g, i * 2));
  destination.forEach((g, i) => block.writeUInt16BE(g, 16 + i * 2));
  block.writeUInt16BE(40_000, 32);
  block.writeUInt16BE(443, 34);
  return block;
}

/** A type-length-value entry (PP2_TYPE_*). */
function tlv(type: number, value: Buffer): Buffer {
  const head = Buffer.alloc(3);
  head[0] = type;
  head.writeUInt16BE(value.length, 1);
  return Buffer.concat([head, value]);
}

const header = (length: number, address: string | null): ProxyHeader => ({ kind: 'header', length, address });

t.test('v1: TCP4, TCP6 and UNKNOWN, with the request that follows left alone', async (t) => {
  const tcp4 = 'PROXY TCP4 203.0.113.7 10.0.0.1 40000 443\r\n';
  t.same(readProxyHeader(Buffer.from(tcp4)), header(tcp4.length, '203.0.113.7'));
  t.same(readProxyHeader(Buffer.concat([Buffer.from(tcp4), REQUEST])), header(tcp4.length, '203.0.113.7'), 'the length stops at the CRLF');
  const tcp6 = 'PROXY TCP6 2001:db8::7 2001:db8::1 40000 443\r\n';
  t.same(readProxyHeader(Buffer.from(tcp6)), header(tcp6.length, '2001:db8::7'));
  // The text is the balancer's, as it wrote it: allowlists (BlockList) read any spelling.
  const mapped = 'PROXY TCP6 ::ffff:203.0.113.7 ::ffff:10.0.0.1 1 2\r\n';
  t.same(readProxyHeader(Buffer.from(mapped)), header(mapped.length, '::ffff:203.0.113.7'));
  t.same(readProxyHeader(Buffer.from('PROXY UNKNOWN\r\n')), header(15, null), 'UNKNOWN: the peer is the client');
  const unknownWithAddresses = 'PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n';
  t.same(readProxyHeader(Buffer.from(unknownWithAddresses)), header(unknownWithAddresses.length, null), 'what follows UNKNOWN is ignored');
  const ports = 'PROXY TCP4 1.2.3.4 5.6.7.8 0 65535\r\n';
  t.same(readProxyHeader(Buffer.from(ports)), header(ports.length, '1.2.3.4'), 'ports 0 and 65535');
  // The longest line the spec allows (107 bytes with CRLF): TCP6 with the longest addresses and ports.
  const longest = `PROXY TCP6 ${'ffff:'.repeat(7)}ffff ${'ffff:'.repeat(7)}ffff 65535 65535\r\n`;
  t.equal(longest.length, 104);
  t.same(readProxyHeader(Buffer.from(longest)), header(104, `${'ffff:'.repeat(7)}ffff`));
});

t.test("v1 cut anywhere is 'more'", async (t) => {
  const line = Buffer.from('PROXY TCP4 203.0.113.7 10.0.0.1 40000 443\r\n');
  for (let n = 1; n < line.length; n++) t.same(readProxyHeader(line.subarray(0, n)), { kind: 'more' }, `${n} bytes`);
});

t.test('v1 malformed or too long is refused', async (t) => {
  const refused = [
    'PROXY TCP4 203.0.113.7 10.0.0.1 40000 443\n', // bare LF
    'PROXY TCP4 203.0.113.7 10.0.0.1 40000\r\n', // a port missing
    'PROXY TCP4 203.0.113.7 10.0.0.1 40000 443 x\r\n', // one field too many
    'PROXY TCP4  203.0.113.7 10.0.0.1 40000 443\r\n', // two spaces
    'PROXY TCP5 203.0.113.7 10.0.0.1 40000 443\r\n',
    'PROXY tcp4 203.0.113.7 10.0.0.1 40000 443\r\n', // case matters
    'PROXY TCP4 256.0.113.7 10.0.0.1 40000 443\r\n',
    'PROXY TCP4 203.0.113 10.0.0.1 40000 443\r\n',
    'PROXY TCP4 203.0.113.07 10.0.0.1 40000 443\r\n', // a leading zero (octal in some readers)
    'PROXY TCP4 2001:db8::7 10.0.0.1 40000 443\r\n', // an IPv6 address under TCP4
    'PROXY TCP6 203.0.113.7 2001:db8::1 40000 443\r\n', // an IPv4 address under TCP6
    'PROXY TCP6 2001:db8:::7 2001:db8::1 40000 443\r\n',
    'PROXY TCP6 fe80::1%eth0 2001:db8::1 40000 443\r\n', // a zone is not an address
    'PROXY TCP4 203.0.113.7 10.0.0.1 65536 443\r\n',
    'PROXY TCP4 203.0.113.7 10.0.0.1 040000 443\r\n', // a leading zero in a port
    'PROXY TCP4 203.0.113.7 10.0.0.1 -1 443\r\n',
    'PROXY TCP4 203.0.113.7 10.0.0.1 4e4 443\r\n',
    'PROXY UNKNOWN\x00\r\n',
    'PROXY \r\n',
    'PROXY TCP4 203.0.113.7\r10.0.0.1 40000 443\r\n',
  ];
  for (const line of refused) {
    const out = readProxyHeader(Buffer.from(line, 'latin1'));
    t.equal(out.kind, 'invalid', JSON.stringify(line));
  }
  // No LF within the 107 bytes the spec allows: refused without waiting for more.
  const long = Buffer.from(`PROXY UNKNOWN ${'x'.repeat(93)}`);
  t.equal(long.length, 107);
  t.equal(readProxyHeader(long).kind, 'invalid', '107 bytes without LF');
  t.same(readProxyHeader(long.subarray(0, 106)), { kind: 'more' }, '106 bytes without LF: may still end in time');
  const lateLf = Buffer.from(`PROXY UNKNOWN ${'x'.repeat(93)}\r\n`);
  t.equal(readProxyHeader(lateLf).kind, 'invalid', 'the LF at byte 109');
  const exact = Buffer.from(`PROXY UNKNOWN ${'x'.repeat(91)}\r\n`);
  t.same(readProxyHeader(exact), header(107, null), 'the LF at byte 107: the longest allowed');
});

t.test('v2 PROXY over IPv4 and IPv6, TLVs skipped', async (t) => {
  const four = v2(0x21, 0x11, ipv4Block([203, 0, 113, 7]));
  t.same(readProxyHeader(four), header(28, '203.0.113.7'));
  t.same(readProxyHeader(Buffer.concat([four, REQUEST])), header(28, '203.0.113.7'), 'the request after it is not part of it');
  t.same(readProxyHeader(v2(0x21, 0x12, ipv4Block([198, 51, 100, 1]))), header(28, '198.51.100.1'), 'UDP over IPv4 names its source too');
  const six = v2(0x21, 0x21, ipv6Block([0x2001, 0xdb8, 0, 0, 0, 0, 0, 7]));
  t.same(readProxyHeader(six), header(52, '2001:db8::7'));
  t.same(readProxyHeader(v2(0x21, 0x22, ipv6Block([0x2001, 0xdb8, 0, 0, 0, 0, 0, 8]))), header(52, '2001:db8::8'), 'UDP over IPv6');
  // An authority (SNI), a unique id and a NOOP after the addresses: all inside the declared length.
  const tlvs = Buffer.concat([tlv(0x02, Buffer.from('api.example.com')), tlv(0x05, Buffer.from('conn-42')), tlv(0x04, Buffer.alloc(5))]);
  const withTlvs = v2(0x21, 0x11, Buffer.concat([ipv4Block([192, 0, 2, 9]), tlvs]));
  t.same(readProxyHeader(Buffer.concat([withTlvs, REQUEST])), header(16 + 12 + tlvs.length, '192.0.2.9'));
  const sixWithTlvs = v2(0x21, 0x21, Buffer.concat([ipv6Block([0x2001, 0xdb8, 1, 2, 3, 4, 5, 6]), tlvs]));
  t.same(readProxyHeader(sixWithTlvs), header(16 + 36 + tlvs.length, '2001:db8:1:2:3:4:5:6'));
});

t.test('v2 LOCAL, UNSPEC and Unix sockets name no client: the peer stands for it', async (t) => {
  t.same(readProxyHeader(v2(0x20, 0x00, Buffer.alloc(0))), header(16, null), 'LOCAL (a health check)');
  t.same(readProxyHeader(v2(0x20, 0x11, ipv4Block([203, 0, 113, 7]))), header(28, null), 'LOCAL ignores the addresses it carries');
  t.same(readProxyHeader(v2(0x20, 0x00, tlv(0x04, Buffer.alloc(3)))), header(22, null), 'LOCAL with a TLV');
  t.same(readProxyHeader(v2(0x21, 0x00, Buffer.alloc(0))), header(16, null), 'PROXY UNSPEC');
  t.same(readProxyHeader(v2(0x21, 0x31, Buffer.alloc(216))), header(232, null), 'PROXY over a Unix stream socket (108 + 108 bytes of paths)');
  t.same(readProxyHeader(v2(0x21, 0x32, Buffer.alloc(216))), header(232, null), 'Unix datagram socket');
});

t.test("v2 cut anywhere is 'more'", async (t) => {
  const full = v2(0x21, 0x21, Buffer.concat([ipv6Block([0x2001, 0xdb8, 0, 0, 0, 0, 0, 7]), tlv(0x04, Buffer.alloc(4))]));
  for (let n = 1; n < full.length; n++) t.same(readProxyHeader(full.subarray(0, n)), { kind: 'more' }, `${n} of ${full.length} bytes`);
  t.same(readProxyHeader(full), header(full.length, '2001:db8::7'));
});

t.test('v2 malformed is refused', async (t) => {
  const four = ipv4Block([203, 0, 113, 7]);
  const cases: Array<[string, Buffer]> = [
    ['version 1 in the version nibble', v2(0x11, 0x11, four)],
    ['version 3', v2(0x31, 0x11, four)],
    ['an unknown command', v2(0x22, 0x11, four)],
    ['IPv4 with fewer than 12 address bytes', v2(0x21, 0x11, four.subarray(0, 8))],
    ['IPv6 with fewer than 36 address bytes', v2(0x21, 0x21, Buffer.alloc(32))],
    ['IPv6 declared with the size of IPv4', v2(0x21, 0x21, four)],
    ['an unknown address family', v2(0x21, 0x41, four)],
    ['an unknown transport protocol', v2(0x21, 0x13, four)],
    ['UNSPEC family with a transport protocol', v2(0x21, 0x01, four)],
    ['a declared length over the limit', v2(0x21, 0x11, four, 4097)],
  ];
  for (const [what, bytes] of cases) t.equal(readProxyHeader(bytes).kind, 'invalid', what);
  // Refused from the 16 fixed bytes alone: a huge declared length is not waited for.
  t.equal(readProxyHeader(v2(0x21, 0x11, Buffer.alloc(0), 0xffff)).kind, 'invalid', 'length 65535, nothing after');
});

t.test('neither signature is refused at the first byte that differs', async (t) => {
  for (const text of ['GET / HTTP/1.1\r\n', 'Q', 'PROXX', 'proxy ', '\r\n\r\n\x00\r\nQUIT\r', '\r\nGET']) {
    t.equal(readProxyHeader(Buffer.from(text, 'latin1')).kind, 'invalid', JSON.stringify(text));
  }
  t.same(readProxyHeader(Buffer.from('PROX')), { kind: 'more' }, 'a prefix of v1');
  t.same(readProxyHeader(Buffer.from('\r\n\r\n\x00', 'latin1')), { kind: 'more' }, 'a prefix of v2');
  t.same(readProxyHeader(Buffer.from('\r\n')), { kind: 'more' }, 'CRLF could open v2');
});

t.test('v2 IPv6 text: RFC 5952 compression as Node writes addresses, IPv4-mapped as dotted IPv4', async (t) => {
  const text = (groups: number[]) => {
    const out = readProxyHeader(v2(0x21, 0x21, ipv6Block(groups)));
    return out.kind === 'header' ? out.address : out.kind;
  };
  t.equal(text([0, 0, 0, 0, 0, 0, 0, 0]), '::');
  t.equal(text([0, 0, 0, 0, 0, 0, 0, 1]), '::1');
  t.equal(text([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]), '2001:db8::', 'a run at the end');
  t.equal(text([0, 0, 0, 0, 0, 0, 0x2001, 0xdb8]), '::2001:db8', 'a run at the start');
  t.equal(text([0x2001, 0xdb8, 0, 1, 0, 0, 0, 1]), '2001:db8:0:1::1', 'one zero group alone is not compressed');
  t.equal(text([0x2001, 0xdb8, 0, 0, 1, 0, 0, 0]), '2001:db8:0:0:1::', 'the longest run is compressed');
  t.equal(text([0x2001, 0, 0, 1, 0, 0, 0, 1]), '2001:0:0:1::1');
  t.equal(text([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]), '2001:db8::1:0:0:1', 'two runs of the same length: the first');
  t.equal(text([0, 0, 1, 0, 0, 1, 1, 1]), '::1:0:0:1:1:1', 'the first run of a tie, even at the start');
  t.equal(text([1, 0, 0, 1, 1, 1, 0, 0]), '1::1:1:1:0:0', 'the first run of a tie, the second at the end');
  t.equal(text([0xabcd, 0xef01, 0x2345, 0x6789, 0xabcd, 0xef01, 0x2345, 0x6789]), 'abcd:ef01:2345:6789:abcd:ef01:2345:6789', 'lower case, no run');
  t.equal(text([0x2001, 0xdb8, 0x0a, 0x100, 0, 0, 0, 0x10]), '2001:db8:a:100::10', 'no leading zeros in a group');
  t.equal(text([0, 0, 0, 0, 0, 0xffff, 0xcb00, 0x7107]), '203.0.113.7', 'IPv4-mapped: the IPv4 address');
  t.equal(text([0, 0, 0, 0, 0, 0xffff, 0, 1]), '0.0.0.1');
  t.equal(text([0, 0, 0, 0, 0xffff, 0, 0xcb00, 0x7107]), '::ffff:0:cb00:7107', 'IPv4-translated is not mapped');
  t.equal(text([0, 0, 0, 0, 1, 0xffff, 0xcb00, 0x7107]), '::1:ffff:cb00:7107', 'nor a near miss');
  // The same text Node gives for the same bytes (it is what a direct client's address looks like).
  for (const groups of [
    [0x2001, 0xdb8, 0, 0, 1, 0, 0, 1],
    [0, 0, 1, 0, 0, 1, 1, 1],
    [0xfe80, 0, 0, 0, 0x1ff, 0xfe23, 0x4567, 0x890a],
    [1, 0, 1, 0, 1, 0, 1, 0],
  ]) {
    const address = groups.map((g) => g.toString(16)).join(':');
    t.equal(text(groups), new SocketAddress({ address, family: 'ipv6' }).address, address);
  }
});
