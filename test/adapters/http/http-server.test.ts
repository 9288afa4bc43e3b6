import t from 'tap';
import { listenPublic, type ListenSettings, type PublicListener } from '../../../src/http/listen.js';
import { Router } from '../../../src/http/router.js';
import { createLogger } from '../../../src/observability/logger.js';
import { converse, header, proxyV1, proxyV2, proxyV2Local, transcript, type Conversation, type Step } from '../../helpers/http-conversation.js';
import { rawRequest } from '../../helpers/raw-http.js';

/**
 * The HTTP server (src/http/server.ts, connection.ts) behind a real Router, as
 * a client, a balancer and an attacker see it on raw sockets: pipelined
 * requests answered in order, HEAD, 100-continue, a handler that throws, the
 * PROXY protocol from trusted balancers only, and SO_REUSEPORT.
 */

const SETTINGS: ListenSettings = {
  host: '127.0.0.1',
  port: 0,
  maxBodyBytes: 1024,
  maxManagementBodyBytes: 1024,
  // A balancer elsewhere: this test's client (127.0.0.1) is not it.
  proxyProtocolFrom: ['192.0.2.0/24'],
  headTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 10_000,
};

function testRouter(): Router {
  const router = new Router(createLogger('silent'));
  const opts = { maxBodyBytes: 1024 };
  router.add('get', '/who', opts, (ex) => ex.send(200, ex.remoteAddress));
  // Answers after a while: the next pipelined request waits its turn behind it.
  router.add('get', '/slow/:n', opts, async (ex) => {
    await new Promise((r) => setTimeout(r, 30));
    ex.send(200, `slow ${ex.params[0]} from ${ex.remoteAddress}`);
  });
  router.add('get', '/throw', opts, () => {
    throw new Error('boom: a secret the client must not see');
  });
  router.add('post', '/echo', opts, async (ex) => ex.send(200, String((await ex.body).length)));
  // What a handler sees of the head: Host (read by same-origin checks), framing fields not at all.
  router.add('post', '/head', opts, (ex) => ex.sendJson(200, ex.headers));
  router.fallback(1024);
  return router;
}

const listeners: PublicListener[] = [];
async function listen(settings: Partial<ListenSettings> = {}, router = testRouter(), reusePort = false): Promise<PublicListener> {
  const listener = await listenPublic(router, { ...SETTINGS, ...settings }, reusePort);
  listeners.push(listener);
  return listener;
}
t.teardown(() => {
  for (const listener of listeners) {
    listener.close();
    listener.destroyConnections();
  }
});

const untrusted = await listen();
const trusted = await listen({ proxyProtocolFrom: ['127.0.0.1'] });

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nhost: x\r\n${extra}\r\n`;
const statuses = (c: Conversation) => c.responses.map((r) => r.status);
const bodies = (c: Conversation) => c.responses.map((r) => r.body.toString('latin1'));
/** Talks to `port`, half-closes after the steps, and reads until the server closes. */
const talk = (port: number, steps: readonly Step[] | Step, headResponses?: number[]) => converse(port, steps, { timeoutMs: 3_000, headResponses });

t.test('pipelined requests to slow handlers: every one answered, in order, on one connection', async (t) => {
  const sent = get('/slow/1') + get('/slow/2') + get('/who') + get('/slow/3');
  const c = await talk(untrusted.port, sent);
  t.same(statuses(c), [200, 200, 200, 200], transcript(sent, c));
  t.same(bodies(c), ['slow 1 from 127.0.0.1', 'slow 2 from 127.0.0.1', '127.0.0.1', 'slow 3 from 127.0.0.1']);
  t.equal(c.ending, 'closed', 'FIN after the last answer (the client half-closed)');
});

t.test('pipelined requests sent in pieces, split across requests: the same answers', async (t) => {
  const whole = get('/slow/a') + get('/who') + get('/slow/b');
  const pieces = [whole.slice(0, 7), whole.slice(7, 40), whole.slice(40, 41), whole.slice(41)];
  const c = await converse(untrusted.port, pieces, { gapMs: 20, timeoutMs: 3_000 });
  t.same(bodies(c), ['slow a from 127.0.0.1', '127.0.0.1', 'slow b from 127.0.0.1'], transcript(pieces, c));
});

t.test('a HEAD is answered without a body, and the next answer follows at once', async (t) => {
  const c = await talk(untrusted.port, get('/who').replace('GET', 'HEAD') + get('/who'), [0]);
  t.same(statuses(c), [200, 200]);
  t.equal(header(c.responses[0]!, 'content-length'), '9', "HEAD: the GET answer's length");
  t.match(c.raw.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[^]*?\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*?\r\n\r\n127\.0\.0\.1$/, 'no body bytes between the two answers');
});

t.test('Expect: 100-continue gets 100 Continue, then the answer once the body is sent', async (t) => {
  const steps: Step[] = [
    'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\nexpect: 100-continue\r\n\r\n',
    { until: (got) => got.includes('HTTP/1.1 100 Continue\r\n\r\n'), what: '100 Continue' },
    'hello',
  ];
  const c = await talk(untrusted.port, steps);
  t.equal(c.stuckAt, null, transcript(steps, c));
  t.same(statuses(c), [100, 200]);
  t.equal(c.responses[1]!.body.toString(), '5');
  // With the body in the same packet there is nothing to wait for: no 100 needed.
  const eager = await talk(untrusted.port, 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nexpect: 100-continue\r\n\r\nhi');
  t.same(bodies(eager), ['2']);
  t.same(statuses(eager), [200]);
});

t.test('a handler sees Host (from the field, or an absolute-form target) and the body length, never the framing fields', async (t) => {
  const c = await talk(untrusted.port, [
    'POST /head HTTP/1.1\r\nHost: Console.Example:8080\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\nX-A: 1\r\n\r\n3\r\nabc\r\n0\r\n\r\n' +
      'POST http://other.example/head HTTP/1.1\r\nHost: ignored.example\r\nContent-Length: 0\r\n\r\n',
  ]);
  t.same(statuses(c), [200, 200]);
  const [first, second] = c.responses.map((r) => JSON.parse(r.body.toString()));
  t.same(first, { 'x-a': '1', host: 'Console.Example:8080', 'content-length': '3' });
  t.equal(second.host, 'other.example', 'the absolute-form authority is the Host');
});

t.test('a handler that throws: 500 internal (no detail), and the connection goes on', async (t) => {
  const c = await talk(untrusted.port, get('/throw') + get('/who'));
  t.same(statuses(c), [500, 200]);
  t.equal(c.responses[0]!.code, 'internal');
  t.notMatch(c.raw.toString('latin1'), /boom|secret/, 'the error stays in the log');
  t.equal(header(c.responses[0]!, 'connection'), undefined, 'not closed by the 500');
  t.equal(c.responses[1]!.body.toString(), '127.0.0.1');
});

t.test("a client's PROXY header from an untrusted peer: 400 wherever it is, never naming the client", async (t) => {
  const v2 = proxyV2('203.0.113.7');
  const v1 = proxyV1('203.0.113.7');
  const first = await talk(untrusted.port, [v2, get('/who')]);
  t.same(statuses(first), [400], 'v2 at the start');
  t.equal(first.responses[0]!.code, 'bad_request');
  t.equal(header(first.responses[0]!, 'connection'), 'close');
  t.equal(first.ending, 'closed');
  const firstV1 = await talk(untrusted.port, v1 + get('/who'));
  t.same(statuses(firstV1), [400], 'v1 at the start');
  const later = await talk(untrusted.port, [get('/slow/p'), v2, get('/who')]);
  t.same(statuses(later), [200, 400], 'v2 after a first request on the same connection');
  t.equal(bodies(later)[0], 'slow p from 127.0.0.1');
  const laterV1 = await talk(untrusted.port, get('/who') + v1 + get('/who'));
  t.same(statuses(laterV1), [200, 400], 'v1 after a first request');
  for (const c of [first, firstV1, later, laterV1]) t.notMatch(c.raw.toString('latin1'), /203\.0\.113/, 'the named address appears nowhere');
});

t.test('from a trusted balancer: PROXY v1 and v2 accepted, and the address they name is the client', async (t) => {
  const cases: Array<[string, Buffer | string, string]> = [
    ['v1 TCP4', proxyV1('203.0.113.7'), '203.0.113.7'],
    ['v1 TCP6', 'PROXY TCP6 2001:db8::7 2001:db8::1 40000 443\r\n', '2001:db8::7'],
    ['v1 TCP6, IPv4-mapped', 'PROXY TCP6 ::ffff:198.51.100.4 ::ffff:10.0.0.1 40000 443\r\n', '198.51.100.4'],
    ['v1 UNKNOWN: the peer', 'PROXY UNKNOWN\r\n', '127.0.0.1'],
    ['v2 PROXY IPv4', proxyV2('198.51.100.9'), '198.51.100.9'],
    ['v2 PROXY IPv6', v2Ipv6([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]), '2001:db8::1:0:0:1'],
    ['v2 PROXY IPv6, IPv4-mapped', v2Ipv6([0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0205]), '192.0.2.5'],
    ['v2 LOCAL (a health check): the peer', proxyV2Local(), '127.0.0.1'],
    ['v2 with TLVs (authority, unique id, noop)', withTlvs(proxyV2('203.0.113.99')), '203.0.113.99'],
  ];
  for (const [what, proxy, address] of cases) {
    const c = await talk(trusted.port, [proxy, get('/who') + get('/slow/x')]);
    t.same(bodies(c), [address, `slow x from ${address}`], `${what}: ${transcript([proxy], c)}`);
  }
  // The header and the first request in one packet, as balancers send them.
  const together = await talk(trusted.port, Buffer.concat([proxyV2('198.51.100.10'), Buffer.from(get('/who'))]));
  t.same(bodies(together), ['198.51.100.10'], 'in one write');
});

t.test('from a trusted balancer, a PROXY header split over several writes works', async (t) => {
  const v1 = proxyV1('203.0.113.21');
  const v1Pieces = [v1.slice(0, 3), v1.slice(3, 6), v1.slice(6, 20), v1.slice(20, -1), v1.slice(-1) + get('/who')];
  const c1 = await converse(trusted.port, v1Pieces, { gapMs: 20, timeoutMs: 3_000 });
  t.same(bodies(c1), ['203.0.113.21'], transcript(v1Pieces, c1));
  const v2 = withTlvs(proxyV2('203.0.113.22'));
  // Inside the signature, inside the length, inside the addresses, inside a TLV, then the request.
  const v2Pieces = [v2.subarray(0, 1), v2.subarray(1, 7), v2.subarray(7, 15), v2.subarray(15, 20), v2.subarray(20, 30), v2.subarray(30), Buffer.from(get('/who'))];
  const c2 = await converse(trusted.port, v2Pieces, { gapMs: 20, timeoutMs: 3_000 });
  t.same(bodies(c2), ['203.0.113.22'], transcript(v2Pieces, c2));
  const byteByByte = await converse(trusted.port, [...proxyV2('203.0.113.23')].map((b) => Buffer.from([b])).concat(Buffer.from(get('/who'))), { gapMs: 2, timeoutMs: 3_000 });
  t.same(bodies(byteByByte), ['203.0.113.23'], 'byte by byte');
});

t.test('from a trusted balancer: no PROXY header, or a malformed one, is refused with 400', async (t) => {
  const cases: Array<[string, Buffer | string]> = [
    ['a request without the header', get('/who')],
    ['an empty line first', `\r\n${get('/who')}`],
    ['v1 with a bare LF', 'PROXY TCP4 203.0.113.7 127.0.0.1 40000 8080\n'],
    ['v1 TCP5', 'PROXY TCP5 203.0.113.7 127.0.0.1 40000 8080\r\n'],
    ['v1 with a bad address', 'PROXY TCP4 203.0.113.256 127.0.0.1 40000 8080\r\n'],
    ['v1 with a bad port', 'PROXY TCP4 203.0.113.7 127.0.0.1 70000 8080\r\n'],
    ['v1 too long', `PROXY UNKNOWN ${'x'.repeat(120)}`],
    ['v2 of version 3', patch(proxyV2('203.0.113.7'), 12, 0x31)],
    ['v2 with an unknown command', patch(proxyV2('203.0.113.7'), 12, 0x2f)],
    ['v2 IPv6 too short', patch(proxyV2('203.0.113.7'), 13, 0x21)],
    ['v2 declaring 64 KiB', patch(patch(proxyV2('203.0.113.7'), 14, 0xff), 15, 0xff)],
  ];
  for (const [what, sent] of cases) {
    const c = await talk(trusted.port, [sent, get('/who')]);
    t.same(statuses(c), [400], `${what}: ${transcript([sent], c)}`);
    t.equal(c.responses[0]?.code, 'bad_request', what);
    t.equal(c.ending, 'closed', `${what}: FIN after the refusal`);
    t.notMatch(c.raw.toString('latin1'), /203\.0\.113/, `${what}: no address named`);
  }
  // A second PROXY header after the first is a client's: a request like any other, refused.
  const twice = await talk(trusted.port, [proxyV2('198.51.100.1'), proxyV2('203.0.113.7'), get('/who')]);
  t.same(statuses(twice), [400], 'a second header');
  t.notMatch(twice.raw.toString('latin1'), /203\.0\.113/);
});

t.test('reusePort: two listeners on one port, and the kernel spreads new connections over both', async (t) => {
  const named = (name: string) => {
    const router = new Router(createLogger('silent'));
    router.add('get', '/name', { maxBodyBytes: 0 }, (ex) => ex.send(200, name));
    router.fallback(0);
    return router;
  };
  const a = await listen({}, named('A'), true);
  const b = await listen({ port: a.port }, named('B'), true);
  t.equal(b.port, a.port);
  const seen = { A: 0, B: 0 } as Record<string, number>;
  for (let i = 0; i < 40; i++) {
    const res = await rawRequest(a.port, Buffer.from(get('/name', 'connection: close\r\n')), 3_000);
    t.equal(res.status, 200);
    seen[res.body] = (seen[res.body] ?? 0) + 1;
  }
  t.equal(seen.A! + seen.B!, 40, 'every connection answered by one of them');
  t.ok(seen.A! > 0 && seen.B! > 0, `both answered (A ${seen.A}, B ${seen.B})`);
  // Without reusePort a second listener on a taken port fails instead of sharing it.
  await t.rejects(listenPublic(named('C'), { ...SETTINGS, port: a.port }), { code: 'EADDRINUSE' });
});

/** A PROXY v2 header (PROXY, TCP over IPv6) naming the source given as 8 groups. */
function v2Ipv6(groups: number[]): Buffer {
  const buf = Buffer.alloc(16 + 36);
  Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]).copy(buf);
  buf[12] = 0x21;
  buf[13] = 0x21;
  buf.writeUInt16BE(36, 14);
  groups.forEach((g, i) => buf.writeUInt16BE(g, 16 + i * 2));
  buf.writeUInt16BE(1, 16 + 30); // destination ::1
  buf.writeUInt16BE(40_000, 48);
  buf.writeUInt16BE(8080, 50);
  return buf;
}

/** The v2 header with TLVs appended (authority, unique id, noop) and its length field grown to match. */
function withTlvs(header: Buffer): Buffer {
  const tlvs = Buffer.concat([tlv(0x02, Buffer.from('api.example.com')), tlv(0x05, Buffer.from('conn-7')), tlv(0x04, Buffer.alloc(3))]);
  const out = Buffer.concat([header, tlvs]);
  out.writeUInt16BE(header.readUInt16BE(14) + tlvs.length, 14);
  return out;
}

function tlv(type: number, value: Buffer): Buffer {
  const head = Buffer.from([type, 0, 0]);
  head.writeUInt16BE(value.length, 1);
  return Buffer.concat([head, value]);
}

/** A copy of `buf` with one byte changed. */
function patch(buf: Buffer, at: number, value: number): Buffer {
  const copy = Buffer.from(buf);
  copy[at] = value;
  return copy;
}
