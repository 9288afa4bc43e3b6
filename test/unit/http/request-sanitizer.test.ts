import t from 'tap';
import { decodeRawValue, MALFORMED_MARK, RAW_HEADERS_MARK, RequestSanitizer, type SanitizerOutput } from '../../../src/http/request-sanitizer.js';

const HEAD = 'POST /events/t/q HTTP/1.1\r\nhost: x\r\n';

/** Feeds the bytes in the given pieces; returns what was forwarded (as latin1) and the refusal, if any. */
function run(pieces: Buffer[], maxHead = 4096): { forwarded: string; refuse: string | null } {
  const s = new RequestSanitizer(maxHead);
  const out: SanitizerOutput[] = pieces.map((p) => s.push(p));
  return {
    forwarded: Buffer.concat(out.flatMap((o) => o.forward)).toString('latin1'),
    refuse: out.find((o) => o.refuse)?.refuse?.toString('latin1') ?? null,
  };
}
const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
/** Every way of cutting `buf` in two, plus byte by byte. */
function splits(buf: Buffer): Buffer[][] {
  const out: Buffer[][] = [[buf], [...buf].map((b) => Buffer.from([b]))];
  for (let i = 1; i < buf.length; i++) out.push([buf.subarray(0, i), buf.subarray(i)]);
  return out;
}
const headerOf = (forwarded: string, name: string) => new RegExp(`\\r\\n${name}: ([^\\r]*)\\r\\n`).exec(forwarded)?.[1];

t.test('clean requests pass byte for byte, however the stream is cut', async (t) => {
  const two = bytes(HEAD, 'content-length: 5\r\nx-a: b\r\n\r\nhello', HEAD, 'x-b: c\r\n\r\n', HEAD, 'content-length: 0\r\n\r\n');
  for (const pieces of splits(two)) {
    const { forwarded, refuse } = run(pieces);
    if (forwarded !== two.toString('latin1') || refuse !== null) t.fail(`cut into ${pieces.map((p) => p.length).join('+')}`);
  }
  t.pass('all cuts forwarded unchanged');
});

t.test('chunked bodies are followed to the next head (trailers included)', async (t) => {
  const chunked = bytes(HEAD, 'transfer-encoding: chunked\r\n\r\n', '5\r\nhello\r\n', 'a;ext=1\r\n0123456789\r\n', '0\r\nx-trailer: 1\r\n\r\n');
  const next = bytes(HEAD, 'x-type: a', [0x01], 'b\r\n\r\n');
  for (const pieces of splits(Buffer.concat([chunked, next]))) {
    const { forwarded } = run(pieces);
    if (!forwarded.startsWith(chunked.toString('latin1')) || headerOf(forwarded.slice(chunked.length), 'x-type') !== Buffer.from('a\u0001b').toString('base64url')) {
      t.fail(`cut into ${pieces.map((p) => p.length).join('+')}: ${JSON.stringify(forwarded)}`);
    }
  }
  const bare = bytes(HEAD, 'transfer-encoding: chunked\r\n\r\n', '0\r\n\r\n', HEAD, 'x-z: \u00ff\r\n\r\n');
  t.match(run([bare]).forwarded, /x-streamgate-guard-raw: x-z\r\n\r\n$/, 'no trailers: the head after the last chunk is checked');
});

t.test('control bytes, a bare CR and non-ASCII bytes in a value: re-encoded raw, name listed', async (t) => {
  const cases: Array<[number[], string]> = [
    [[0x61, 0x0d, 0x62], 'a\rb'],
    [[0x61, 0x00, 0x62], 'a\u0000b'],
    [[0x61, 0x1b, 0x7f], 'a\u001b\u007f'],
    [[0x63, 0x61, 0x66, 0xc3, 0xa9], 'café'],
    [[0xe6, 0x9d, 0xb1, 0x61], '東a'],
    [[0x6f, 0x6b, 0xff], 'ok\ufffd'],
  ];
  for (const [value, decoded] of cases) {
    const { forwarded, refuse } = run([bytes(HEAD, 'X-Type: ', value, '\r\nx-other: 1\r\n\r\n')]);
    t.equal(refuse, null);
    t.equal(headerOf(forwarded, RAW_HEADERS_MARK), 'x-type');
    t.equal(decodeRawValue(headerOf(forwarded, 'x-type')!), decoded, JSON.stringify(decoded));
    t.equal(headerOf(forwarded, 'x-other'), '1', 'clean headers untouched');
    t.notOk(/[\x00-\x08\x0a-\x1f\x7f-\xff]/.test(forwarded.replace(/\r\n/g, '')), 'nothing uWS would choke on is forwarded');
  }
  const twice = run([bytes(HEAD, 'x-t: a\r\nx-t: b', [0x01], '\r\n\r\n')]).forwarded;
  t.equal(decodeRawValue(/\r\nx-t: ([^\r]*)\r\nx-t: ([^\r]*)\r\n/.exec(twice)!.slice(1).join(', ')), 'a, b\u0001', 'every line of a listed name is encoded');
});

t.test('lines that cannot be headers: dropped and the head marked malformed; the rest of the connection passes through', async (t) => {
  for (const [line, reason] of [
    ['x a: b', /valid name/],
    ['no-colon', /valid name/],
    [' folded', /obs-fold/],
    ['x-\u0001: b', /valid name/],
    ['content-length: 5\u0001', /content-length/],
  ] as const) {
    const { forwarded, refuse } = run([bytes(HEAD, `${line}\r\n\r\n`, 'GARBAGE \u0001\r\n\r\n')]);
    t.equal(refuse, null, line);
    t.match(decodeURIComponent(headerOf(forwarded, MALFORMED_MARK) ?? ''), reason, line);
    t.notOk(forwarded.includes(line), 'the bad line is not forwarded');
    t.ok(forwarded.endsWith('GARBAGE \u0001\r\n\r\n'), 'after a malformed head the stream is passed through (the app closes)');
  }
  const lf = run([bytes(HEAD, 'x-a: 1\nx-b: 2\r\n\r\n')]).forwarded;
  t.match(decodeURIComponent(headerOf(lf, MALFORMED_MARK) ?? ''), /bare LF/, 'a bare LF line ending (also an LF inside a value)');
});

t.test('request lines with controls and over-large heads are refused directly', async (t) => {
  const bad = run([bytes('POST /a\u0001 HTTP/1.1\r\nhost: x\r\n\r\n')]);
  t.match(bad.refuse, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.match(bad.refuse, /connection: close/);
  t.match(bad.refuse, /"code":"bad_request"/);
  for (const line of ['POST /a b HTTP/1.1', 'GARBAGE', 'POST /a HTTP/2.0', 'POST /a HTTP/1.1 x', 'PO\u00c9ST /a HTTP/1.1']) {
    t.match(run([bytes(`${line}\r\nhost: x\r\n\r\n`)]).refuse, /^HTTP\/1\.1 400 /, JSON.stringify(line));
  }
  t.equal(bad.forwarded, '', 'nothing forwarded');
  const big = run([bytes(HEAD, `x-big: ${'a'.repeat(5000)}`)], 4096);
  t.match(big.refuse, /^HTTP\/1\.1 431 /);
  t.match(big.refuse, /"code":"header_too_large"/);
  t.equal(big.forwarded, '');
});

t.test('a body over maxBodyBytes is refused by the guard (413), by Content-Length or by counting chunks', async (t) => {
  const s = new RequestSanitizer(4096, { events: 10, other: 10 });
  const byLength = s.push(bytes(HEAD, 'content-length: 11\r\n\r\n', 'x'.repeat(11)));
  t.match(byLength.refuse?.toString(), /^HTTP\/1\.1 413 [^]*"code":"payload_too_large"/);
  t.equal(byLength.forward.length, 0, 'the head is not passed on');
  t.same(new RequestSanitizer(4096, { events: 10, other: 10 }).push(bytes(HEAD, 'content-length: 10\r\n\r\n', 'x'.repeat(10))).refuse, null, 'at the limit: passed on');
  const chunks = new RequestSanitizer(4096, { events: 10, other: 10 }).push(bytes(HEAD, 'transfer-encoding: chunked\r\n\r\n', '6\r\nabcdef\r\n', '5\r\nghijk\r\n'));
  t.match(chunks.refuse?.toString(), /^HTTP\/1\.1 413 /, 'the chunk that crosses the limit');
});

t.test('body limits follow the route family: ingress (/events/…) or everything else', async (t) => {
  const limits = { events: 20, other: 5 };
  const post = (target: string, n: number) =>
    new RequestSanitizer(4096, limits).push(bytes(`POST ${target} HTTP/1.1\r\nhost: x\r\ncontent-length: ${n}\r\n\r\n`, 'x'.repeat(n))).refuse;
  t.equal(post('/events/t/q', 20), null, 'ingress: 20 of 20');
  t.match(post('/events/t/q', 21)?.toString(), /^HTTP\/1\.1 413 /, 'ingress: 21 of 20');
  t.equal(post('/events/sandbox/t/q', 20), null, 'the sandbox route is ingress too');
  t.equal(post('/v1/tenants/t/queues/q', 5), null, 'management: 5 of 5');
  t.match(post('/v1/tenants/t/queues/q', 6)?.toString(), /^HTTP\/1\.1 413 /, 'management: 6 of 5');
  t.match(post('/eventsx/t', 6)?.toString(), /^HTTP\/1\.1 413 /, 'a look-alike path is not ingress');
});

t.test('client-sent marker headers are dropped', async (t) => {
  const { forwarded } = run([bytes(HEAD, `${RAW_HEADERS_MARK}: x-api-key\r\n${MALFORMED_MARK}: no\r\nx-api-key: k\r\n\r\n`)]);
  t.notOk(forwarded.includes('x-streamgate-guard'), 'no marker survives');
  t.equal(headerOf(forwarded, 'x-api-key'), 'k');
});

t.test('empty lines before a request line are skipped (RFC 9112 §2.2)', async (t) => {
  t.equal(run([bytes('\r\n\r\n', HEAD, '\r\n')]).forwarded, `${HEAD}\r\n`);
});
