import t from 'tap';
import fc from 'fast-check';
import type { RequestHead } from '../../../src/http/parser/parsed-head.js';
import { RequestParser } from '../../../src/http/parser/request-parser.js';

/** What the parser reported, flattened: heads (a summary), bodies (joined), ends and refusals in order. */
type Event = { head: Summary } | { body: string } | 'end' | { error: string; status: number };
interface Summary {
  method: string;
  target: string;
  minor: number;
  host: string;
  fields: string[];
  chunked: boolean;
  length: number;
  expect: boolean;
  close: boolean;
}

const summary = (h: RequestHead): Summary => ({
  method: h.method,
  target: h.target,
  minor: h.minor,
  host: h.host,
  fields: Object.entries(h.headers).map(([name, value]) => `${name}=${value}`),
  chunked: h.chunked,
  length: h.contentLength,
  expect: h.expectContinue,
  close: h.close,
});

/** Feeds `pieces` one by one (then FIN when `fin`); consecutive body pieces are joined. */
function parse(pieces: Buffer[], fin = false, limits = { maxHeadBytes: 1024, maxFields: 10, body: 64 }): Event[] {
  const events: Event[] = [];
  const parser = new RequestParser(
    { maxHeadBytes: limits.maxHeadBytes, maxFields: limits.maxFields, bodyLimit: (target) => (target.startsWith('/events/') ? limits.body : limits.body * 4) },
    {
      head: (h) => events.push({ head: summary(h) }),
      body: (d) => {
        const last = events[events.length - 1];
        if (last && typeof last === 'object' && 'body' in last) last.body += d.toString('latin1');
        else events.push({ body: d.toString('latin1') });
      },
      end: () => events.push('end'),
      error: (err) => events.push({ error: err.code, status: err.status }),
    },
  );
  for (const piece of pieces) parser.push(piece);
  if (fin) parser.finish();
  return events;
}
const one = (text: string, fin = false) => parse([Buffer.from(text, 'latin1')], fin);
const errorOf = (events: Event[]) => {
  const last = events[events.length - 1];
  return typeof last === 'object' && 'error' in last ? last.error : null;
};
const H = 'host: x\r\n';

t.test('a plain request: method, target, host, fields (lower-case names, OWS trimmed), Content-Length body', async (t) => {
  const events = one(`POST /events/t/q?a=1 HTTP/1.1\r\nHost: x\r\nX-Api-Key:  k1 \r\nx_y.z: \tv\t\r\nContent-Length: 5\r\n\r\nhello`);
  t.same(events, [
    { head: { method: 'POST', target: '/events/t/q?a=1', minor: 1, host: 'x', fields: ['x-api-key=k1', 'x_y.z=v'], chunked: false, length: 5, expect: false, close: false } },
    { body: 'hello' },
    'end',
  ]);
});

t.test('framing and connection fields are consumed; other names pass, the old guard prefix included', async (t) => {
  const [head] = one(`GET / HTTP/1.1\r\n${H}connection: keep-alive, close\r\nexpect: 100-continue\r\nte: trailers\r\nupgrade: h2c\r\nkeep-alive: 5\r\nx-streamgate-guard-fields: forged\r\nX-Streamgate-Guard-Other: 1\r\nx-a: 1\r\n\r\n`);
  t.same((head as { head: Summary }).head.fields, ['x-streamgate-guard-fields=forged', 'x-streamgate-guard-other=1', 'x-a=1']);
  t.equal((head as { head: Summary }).head.close, true, 'connection: close is seen among other tokens');
});

t.test('pipelined requests come out in order; leading empty lines are skipped', async (t) => {
  const events = one(`\r\n\r\nGET /a HTTP/1.1\r\n${H}\r\nPOST /b HTTP/1.1\r\n${H}content-length: 2\r\n\r\nhiGET /c HTTP/1.1\r\n${H}\r\n`);
  t.same(
    events.map((e) => (typeof e === 'object' && 'head' in e ? e.head.target : e)),
    ['/a', 'end', '/b', { body: 'hi' }, 'end', '/c', 'end'],
  );
});

t.test('request lines refused with the reference code', async (t) => {
  const cases: Array<[string, string]> = [
    ['GET  / HTTP/1.1', 'bad_request'],
    ['GET / HTTP/1.1 ', 'bad_request'],
    ['GET\t/ HTTP/1.1', 'bad_request'],
    ['GET / HTTP/1.1\u0000', 'bad_request'],
    ['GET /\u00e9 HTTP/1.1', 'bad_request'],
    ['GET /a#frag HTTP/1.1', 'bad_request'],
    ['GET /a"b HTTP/1.1', 'bad_request'],
    ['GET /a\\b HTTP/1.1', 'bad_request'],
    ['GET /<x> HTTP/1.1', 'bad_request'],
    ['GET / HTTP/1.x', 'bad_request'],
    ['GET / http/1.1', 'bad_request'],
    ['GET / HTTP/11', 'bad_request'],
    ['GET /', 'bad_request'],
    ['GET / HTTP/2.0', 'http_version_not_supported'],
    ['GET / HTTP/0.9', 'http_version_not_supported'],
    ['get / HTTP/1.1', 'not_implemented'],
    ['CONNECT host:443 HTTP/1.1', 'not_implemented'],
    ['TRACE / HTTP/1.1', 'not_implemented'],
    ['PROPFIND / HTTP/1.1', 'not_implemented'],
    ['G(T / HTTP/1.1', 'bad_request'],
    ['GET * HTTP/1.1', 'bad_request'],
    ['GET host:443 HTTP/1.1', 'bad_request'],
    ['GET http://u@h/ HTTP/1.1', 'bad_request'],
    ['GET ftp://h/ HTTP/1.1', 'bad_request'],
    ['PROXY TCP4 203.0.113.7 127.0.0.1 1 2', 'bad_request'],
  ];
  for (const [line, code] of cases) t.equal(errorOf(one(`${line}\r\n${H}\r\n`)), code, JSON.stringify(line));
  const proxyV2 = Buffer.concat([Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0x00, 0x0c]), Buffer.alloc(12, 7), Buffer.from(`GET / HTTP/1.1\r\n${H}\r\n`)]);
  t.equal(errorOf(parse([proxyV2])), 'bad_request', 'a PROXY v2 header is a malformed request line');
  t.equal(errorOf(one('GET / HTTP/1.1\n')), 'bad_request', 'a request line ending in a bare LF');
});

t.test('targets: absolute-form gives the Host; OPTIONS *; HTTP/1.0 and 1.x', async (t) => {
  const abs = one(`GET http://Example.com:8080?q=1 HTTP/1.1\r\n${H}\r\n`)[0] as { head: Summary };
  t.equal(abs.head.target, '/?q=1');
  t.equal(abs.head.host, 'Example.com:8080');
  t.equal((one(`OPTIONS * HTTP/1.1\r\n${H}\r\n`)[0] as { head: Summary }).head.target, '*');
  const old = one('GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.0\r\n\r\n');
  t.same(old.length, 2, 'HTTP/1.0 without Host is served, and closes: the second request is not read');
  t.equal((old[0] as { head: Summary }).head.close, true);
  t.equal((one(`GET / HTTP/1.7\r\n${H}\r\n`)[0] as { head: Summary }).head.minor, 1, 'HTTP/1.7 is read as 1.1');
  t.equal((one(`GET /a|b?c={d}^[e]\` HTTP/1.1\r\n${H}\r\n`)[0] as { head: Summary }).head.target, '/a|b?c={d}^[e]`', 'what fetch() leaves unescaped is served');
});

t.test('header fields refused with the reference code', async (t) => {
  const cases: Array<[string, string]> = [
    [' folded: x\r\n', 'invalid_header'],
    ['x: a\r\n b\r\n', 'invalid_header'],
    ['x: a\r\n\tb\r\n', 'invalid_header'],
    ['no colon\r\n', 'invalid_header'],
    [': empty\r\n', 'invalid_header'],
    ['x : spaced\r\n', 'invalid_header'],
    ['x\t: tab\r\n', 'invalid_header'],
    ['x\u0000y: nul\r\n', 'invalid_header'],
    ['x(y): paren\r\n', 'invalid_header'],
    ['x: a\nx-b: c\r\n', 'invalid_header'],
    ['host: y\r\n', 'bad_request'],
    ['content-length: 1\r\ncontent-length: 1\r\n', 'bad_request'],
    ['content-length: 1, 1\r\n', 'bad_request'],
    ['content-length: +1\r\n', 'bad_request'],
    ['content-length: 0x1\r\n', 'bad_request'],
    ['content-length: \r\n', 'bad_request'],
    ['content-length: 1 1\r\n', 'bad_request'],
    ['transfer-encoding: chunked\r\ncontent-length: 1\r\n', 'bad_request'],
    ['transfer-encoding: xchunked\r\n', 'bad_request'],
    ['transfer-encoding: identity\r\n', 'bad_request'],
    ['transfer-encoding: chunked, identity\r\n', 'bad_request'],
    ['transfer-encoding: chunked\r\ntransfer-encoding: chunked\r\n', 'bad_request'],
    ['transfer-encoding: chunked;q=1\r\n', 'bad_request'],
    ['transfer-encoding: "chunked"\r\n', 'bad_request'],
    ['transfer-encoding: \r\n', 'bad_request'],
    ['transfer-encoding: \u000bchunked\r\n', 'bad_request'],
    ['transfer-encoding: chunked\u000c\r\n', 'bad_request'],
    ['transfer-encoding: \u00a0chunked\r\n', 'bad_request'],
    ['transfer-encoding: \u0085chunked\r\n', 'bad_request'],
    ['transfer-encoding: gzip, chunked\r\n', 'not_implemented'],
  ];
  for (const [fields, code] of cases) t.equal(errorOf(one(`POST / HTTP/1.1\r\n${H}${fields}\r\n`)), code, JSON.stringify(fields));
  t.equal(errorOf(one('GET / HTTP/1.1\r\n\r\n')), 'bad_request', 'no Host in HTTP/1.1');
  for (const host of ['a b', 'a/b', 'a@b', 'a\u0001b', '[::1', 'a:b:c']) t.equal(errorOf(one(`GET / HTTP/1.1\r\nhost: ${host}\r\n\r\n`)), 'bad_request', `host ${JSON.stringify(host)}`);
  for (const host of ['', 'a.b-c', '127.0.0.1:80', '[::1]:443', 'xn--bcher-kva.example']) t.equal(errorOf(one(`GET / HTTP/1.1\r\nhost: ${host}\r\n\r\n`)), null, `host ${JSON.stringify(host)} is fine`);
  t.equal(errorOf(one('POST / HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n')), 'bad_request', 'TE in HTTP/1.0');
  t.equal(errorOf(one(`POST / HTTP/1.1\r\n${H}Transfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n`)), null, 'chunked in any case');
});

t.test('limits: head bytes (whole or in pieces), field count, body by route', async (t) => {
  const big = `GET / HTTP/1.1\r\n${H}x: ${'a'.repeat(1100)}\r\n\r\n`;
  t.equal(errorOf(one(big)), 'header_too_large', 'a head over the limit in one piece');
  t.equal(errorOf(parse([...Buffer.from(big)].map((b) => Buffer.from([b])))), 'header_too_large', 'byte by byte');
  t.equal(errorOf(parse([Buffer.from(`GET / HTTP/1.1\r\nx: ${'a'.repeat(1100)}`)])), 'header_too_large', 'an unfinished head over the limit');
  const fields = (n: number) => `GET / HTTP/1.1\r\n${H}${Array.from({ length: n - 1 }, (_, i) => `x-${i}: v\r\n`).join('')}\r\n`;
  t.equal(errorOf(one(fields(10))), null, '10 fields: the limit');
  t.equal(errorOf(one(fields(11))), 'header_too_large', '11 fields');
  t.equal(errorOf(one(`POST /events/t/q HTTP/1.1\r\n${H}content-length: 65\r\n\r\n`)), 'payload_too_large');
  t.equal(errorOf(one(`POST /waas/x HTTP/1.1\r\n${H}content-length: 65\r\n\r\n`)), null, 'another route has its own limit');
  t.equal(errorOf(one(`POST /events/t/q HTTP/1.1\r\n${H}content-length: 99999999999999999999999\r\n\r\n`)), 'payload_too_large');
  t.equal(errorOf(one(`POST /events/t/q HTTP/1.1\r\n${H}transfer-encoding: chunked\r\n\r\n40\r\n${'a'.repeat(64)}\r\n1\r\n`)), 'payload_too_large', 'counted chunks');
  t.equal(errorOf(one(`POST /events/t/q HTTP/1.1\r\n${H}transfer-encoding: chunked\r\n\r\nfffffffffffffffffff\r\n`)), 'payload_too_large', 'a huge chunk size');
});

t.test('chunked bodies: extensions, trailers dropped, strict lines', async (t) => {
  const events = one(`POST /c HTTP/1.1\r\n${H}transfer-encoding: chunked\r\n\r\n5;a\r\nhello\r\n00006 ; b = "q;\\"x" ;c=d\r\n world\r\n0;z\r\nx-t: 1\r\nx-u: GET /smuggled HTTP/1.1\r\n\r\nGET /next HTTP/1.1\r\n${H}\r\n`);
  t.same(events.slice(1), [{ body: 'hello world' }, 'end', events[3], 'end']);
  t.equal((events[3] as { head: Summary }).head.target, '/next', 'a trailer holding a request line is a trailer field, not a request');
  const bad = ['5a;\r\nhello\r\n', 'g\r\n', '0x5\r\nhello\r\n', '-1\r\n', ' 5\r\nhello\r\n', '5 \r\nhello\r\n', '5;\r\nhello\r\n', '5;a=\r\nhello\r\n', '5;a b\r\nhello\r\n', '5\nhello\r\n', '5\r\nhelloXY', '5\r\nhello\n', '0\r\nbad trailer\r\n\r\n', '0\r\nGET /smuggled HTTP/1.1\r\n\r\n', '0\r\n folded: x\r\n\r\n', '0\r\nx: y\n\r\n'];
  for (const body of bad) t.equal(errorOf(one(`POST /c HTTP/1.1\r\n${H}transfer-encoding: chunked\r\n\r\n${body}`)), 'bad_request', JSON.stringify(body));
});

t.test('nothing after a refusal or a closing request is read as a request', async (t) => {
  const refused = one(`GET / HTTP/1.1\r\n${H}bad\r\n\r\nGET /after HTTP/1.1\r\n${H}\r\n`);
  t.same(refused, [{ error: 'invalid_header', status: 400 }]);
  const closing = one(`GET /a HTTP/1.1\r\n${H}connection: close\r\n\r\nGET /after HTTP/1.1\r\n${H}\r\n`);
  t.same(closing.length, 2, 'head and end of /a only');
});

t.test('FIN: an unfinished request is answered 400, a finished one or a bare CRLF is not', async (t) => {
  t.equal(errorOf(one('GET / HT', true)), 'bad_request');
  t.equal(errorOf(one(`POST / HTTP/1.1\r\n${H}content-length: 5\r\n\r\nab`, true)), 'bad_request');
  t.equal(errorOf(one(`POST / HTTP/1.1\r\n${H}transfer-encoding: chunked\r\n\r\n0\r\n`, true)), 'bad_request', 'trailer section not ended');
  t.same(one(`GET / HTTP/1.1\r\n${H}\r\n`, true).slice(-1), ['end']);
  t.same(one('\r\n\r\n', true), []);
  t.same(one('', true), []);
});

t.test('property: any split of the stream reads the same', async (t) => {
  const streams = [
    `POST /events/t/q HTTP/1.1\r\n${H}x-a: 1\r\ncontent-length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\n${H}x_b: \u00e9\r\n\r\n`,
    `\r\nPOST /c HTTP/1.1\r\n${H}transfer-encoding: chunked\r\nexpect: 100-continue\r\n\r\n3;e="x"\r\nabc\r\n0\r\nt: 1\r\n\r\nDELETE /d HTTP/1.1\r\n${H}connection: close\r\n\r\nGET /never HTTP/1.1\r\n\r\n`,
    `GET /a HTTP/1.1\r\n${H}\r\nPOST /b HTTP/1.1\r\n${H}content-length: 1\r\ncontent-length: 1\r\n\r\nx`,
    `GET / HTTP/1.1\r\n${H}x: ${'a'.repeat(1100)}\r\n\r\n`,
    `POST /c HTTP/1.1\r\n${H}transfer-encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n`,
    `GET / HTTP/1.1\r\n${H}x: a\nb\r\n\r\n`,
  ].map((s) => Buffer.from(s, 'latin1'));
  await fc.assert(
    fc.property(fc.constantFrom(...streams), fc.array(fc.nat(), { maxLength: 12 }), (stream, cuts) => {
      const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
      const pieces: Buffer[] = [];
      let at = 0;
      for (const p of [...points, stream.length]) {
        pieces.push(stream.subarray(at, p));
        at = p;
      }
      return JSON.stringify(parse(pieces, true)) === JSON.stringify(parse([stream], true));
    }),
    { numRuns: 600 },
  );
  t.pass('600 random splits read as the whole stream');
});
