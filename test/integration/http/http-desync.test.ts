import t from 'tap';
import type { Test } from 'tap';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { countRecords, readRecords } from '../../helpers/topic.js';
import {
  allowedServerError,
  chunk,
  converse,
  describe,
  header,
  pool,
  proxyV1,
  proxyV2,
  proxyV2Local,
  transcript,
  type Conversation,
  type ConverseOptions,
  type Step,
} from '../../helpers/http-conversation.js';

/**
 * The HTTP server's strict RFC 9112 parser (src/http/parser/), the one reader
 * of every request. These conversations were written when it relayed to a
 * lenient uWebSockets.js behind it (which took a PROXY v2 header at the start
 * of ANY request); they stay as the server's contract: whatever a smuggler
 * sends, one request is read as one request, and a client never picks its own
 * address (only a balancer in server.proxyProtocolFrom may, at a connection's
 * start: test/integration/http/http-limits.test.ts).
 *
 * Raw-socket conversations for every rule of the parser's behaviour, and the
 * request-smuggling catalogues (PortSwigger, HTTP Garden: CL.TE, TE.CL, TE.TE
 * obfuscations, chunk sizes and extensions, trailers, duplicate/malformed
 * Content-Length, bare LF, obs-fold, NUL, PROXY headers anywhere). Each
 * smuggling case carries an inner request that must never run: a POST of an
 * event holding a unique marker to a queue routed to a test receiver (and, in
 * a second variant, a PROXY v2 header naming an allowlisted address in front
 * of a POST to an allowlisted queue). At the end a control event sent
 * normally on the same ordering lane is delivered, and the receivers must
 * never have seen a marker; the log must hold exactly the events answered 202.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const MAX_BODY = 2048;
const node = await startTestNode(t, backends, { server: { port: 0, host: '127.0.0.1', maxBodyBytes: MAX_BODY } });
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;
const KEY = creds.ingressKey;
const RUN = randomBytes(4).toString('hex');
/** Every smuggled event body holds this; nothing holding it may ever be delivered or logged on the routed queues. */
const SMUGGLED = `SMUGGLED-${RUN}`;
const LANE = `lane-${RUN}`;
const ALLOWED_SOURCE = '203.0.113.7';

const smuggleReceiver = await startReceiver(t);
const allowReceiver = await startReceiver(t);
await api.wire('smuggle', 'smuggle-target', `${smuggleReceiver.url}/smuggle`);
await api.wire('allow', 'allow-target', `${allowReceiver.url}/allow`, { ipAllowlist: ['203.0.113.0/24'] });
for (const [name, settings] of [
  ['decoy', {}],
  ['local', { ipAllowlist: ['127.0.0.1/32'] }],
  [
    'tokens',
    {
      groupKey: { source: 'header', name: 'x_group' },
      partitionKey: { source: 'header', name: 'x.part~' },
      eventType: { source: 'header', name: "x!type'" },
      mappedHeaders: [{ from: { source: 'header', name: 'x#trace|' }, as: 'X-Trace', required: true }],
    },
  ],
] as const) {
  const res = await api.manage('PUT', api.tenantPath(`/queues/${name}`), settings);
  if (res.status >= 300) throw new Error(`queue ${name}: ${res.status} ${JSON.stringify(res.body)}`);
}

// ---- accounting --------------------------------------------------------------
/** 202 answers naming a new event: the log must hold exactly this many records at the end. */
let accepted = 0;
function account(c: Conversation): void {
  for (const r of c.responses) if (r.status === 202 && /^\{"eventId":"evt_[A-Za-z0-9_-]+"\}$/.test(r.body.toString('latin1'))) accepted++;
}

type Expected = readonly string[] | { anyOf: ReadonlyArray<readonly string[]> };

interface Check extends ConverseOptions {
  /** The server must close the connection (FIN, never a reset); default true. */
  closes?: boolean;
}

/**
 * Plays a conversation and checks it: the answers in order (status and the
 * envelope's code), every error in the envelope, no 5xx but 503 unavailable,
 * nothing unparsable in what came back, and the connection closed by FIN.
 */
async function expectConversation(t: Test, name: string, steps: readonly Step[], expected: Expected, options: Check = {}): Promise<Conversation> {
  const c = await converse(node.port, steps, options);
  account(c);
  const got = c.responses.map(describe);
  const alternatives = 'anyOf' in expected ? expected.anyOf : [expected as readonly string[]];
  const matched = alternatives.some((alt) => alt.length === got.length && alt.every((s, i) => s === got[i]));
  const story = `\n${transcript(steps, c)}`;
  if (!matched) t.same(got, alternatives[0], `${name}: answers${alternatives.length > 1 ? ` (or ${alternatives.slice(1).map((a) => JSON.stringify(a)).join(' or ')})` : ''}${story}`);
  else t.pass(`${name}: ${JSON.stringify(got)}`);
  const problems: string[] = [];
  if (c.timedOut) problems.push('timed out');
  if (c.stuckAt) problems.push(`never got ${c.stuckAt}`);
  if (c.parsed.error) problems.push(`unparsable answer: ${c.parsed.error}`);
  const heads = new Set(options.headResponses ?? []);
  let finals = 0;
  for (const r of c.responses) {
    if (r.status >= 500 && !allowedServerError(r)) problems.push(`a ${r.status} ${r.code}`);
    if (r.status >= 400 && !heads.has(finals) && (r.code === null || r.message === null)) problems.push(`${r.status} without the error envelope`);
    if (r.status >= 200) finals++;
  }
  if ((options.closes ?? true) && c.ending !== 'closed') problems.push(`connection ${c.ending}, expected the server to close it with FIN`);
  if (problems.length > 0) t.fail(`${name}: ${problems.join('; ')}${story}`);
  return c;
}

// ---- request builders ----------------------------------------------------------
interface Outer {
  /** Where the outer request of a smuggling case posts. */
  path: string;
  /** What it gets when it is served: 202 on the decoy queue, 403 ip_not_allowed on the allowlisted one. */
  served: string;
}
const DECOY: Outer = { path: `/events/${tenant}/decoy`, served: '202' };
const ALLOW: Outer = { path: `/events/${tenant}/allow`, served: '403 ip_not_allowed' };

let markerSeq = 0;
/** An event POST that must never run: its body holds a unique marker. */
function innerEvent(queue: 'smuggle' | 'allow', what: string): string {
  const body = JSON.stringify({ marker: `${SMUGGLED}-${++markerSeq}`, what });
  return (
    `POST /events/${tenant}/${queue} HTTP/1.1\r\nHost: sg.test\r\nX-Api-Key: ${KEY}\r\nContent-Type: application/json\r\n` +
    `X-Service-Partition-Key: ${LANE}\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  );
}
const v2 = proxyV2(ALLOWED_SOURCE).toString('latin1');
const v1 = proxyV1(ALLOWED_SOURCE);

/** The outer request head: POST to `o`, Host, API key, content type, then `fields` (each with its own line ending). */
const head = (o: Outer, fields: string, host = 'Host: sg.test\r\n') =>
  `POST ${o.path} HTTP/1.1\r\n${host}X-Api-Key: ${KEY}\r\nContent-Type: application/octet-stream\r\n${fields}\r\n`;
const len = (s: string) => Buffer.byteLength(s, 'latin1');
const HEALTH = 'GET /healthz HTTP/1.1\r\nHost: sg.test\r\n\r\n';

interface DesyncCase {
  name: string;
  /**
   * The conversation, given the outer target and the inner request to smuggle
   * (`request`: the inner event request alone, without the PROXY header the
   * allowlist variant puts in front of it).
   */
  build: (o: Outer, inner: string, request: string) => Step[];
  /** The answers; `SERVED` stands for the outer request's own answer. */
  expect: Expected;
  /**
   * The refusal comes after the outer head was complete (in its body): on the
   * allowlisted queue the app may already have answered 403 ip_not_allowed from
   * the head, before the parser refuses the body.
   */
  midBody?: boolean;
}

const refused = (code: string): string[] => [code];
const BAD = refused('400 bad_request');
const BAD_HEADER = refused('400 invalid_header');
const SERVED = ['SERVED'];

/** Refused request lines, each followed by the inner request. */
const requestLineCases: DesyncCase[] = [
  ['two spaces after the method', 'GET  /healthz HTTP/1.1'],
  ['two spaces before the version', 'GET /healthz  HTTP/1.1'],
  ['a tab between method and target', 'GET\t/healthz HTTP/1.1'],
  ['a space after the version', 'GET /healthz HTTP/1.1 '],
  ['a space before the method', ' GET /healthz HTTP/1.1'],
  ['no version (HTTP/0.9 form)', 'GET /healthz'],
  ['only a method', 'GET'],
  ['a control byte in the target', 'GET /heal\x01thz HTTP/1.1'],
  ['DEL in the target', 'GET /heal\x7fthz HTTP/1.1'],
  ['a byte >= 0x80 in the target', 'GET /caf\xe9 HTTP/1.1'],
  ['NUL in the method', 'G\0ET /healthz HTTP/1.1'],
  ['a non-token byte in the method', 'G(T /healthz HTTP/1.1'],
  ['a space inside the target', 'GET /heal thz HTTP/1.1'],
  ['# in the target', 'GET /healthz#x HTTP/1.1'],
  ['" in the target', 'GET /a"b HTTP/1.1'],
  ['< > in the target', 'GET /a<b> HTTP/1.1'],
  ['\\ in the target', 'GET /a\\b HTTP/1.1'],
  ['* with GET', 'GET * HTTP/1.1'],
  ['* with POST', 'POST * HTTP/1.1'],
  ['authority-form', 'GET sg.test:443 HTTP/1.1'],
  ['lower-case protocol name', 'GET /healthz http/1.1'],
  ['HTTP/1', 'GET /healthz HTTP/1'],
  ['HTTP/11', 'GET /healthz HTTP/11'],
  ['HTTP/1.10', 'GET /healthz HTTP/1.10'],
  ['HTTP/1.1.1', 'GET /healthz HTTP/1.1.1'],
  ['HTTP/1.x', 'GET /healthz HTTP/1.x'],
  ['HTTPS/1.1', 'GET /healthz HTTPS/1.1'],
  ['HTTP/ 1.1', 'GET /healthz HTTP/ 1.1'],
].map(([what, line]) => ({
  name: `request line: ${what}`,
  build: (_o: Outer, inner: string) => [`${line}\r\nHost: sg.test\r\n\r\n${inner}`],
  expect: BAD,
}));
requestLineCases.push(
  ...[
    ['HTTP/2.0', 'GET /healthz HTTP/2.0'],
    ['HTTP/0.9', 'GET /healthz HTTP/0.9'],
    ['HTTP/3.0', 'GET /healthz HTTP/3.0'],
  ].map(([what, line]) => ({
    name: `request line: ${what} is 505`,
    build: (_o: Outer, inner: string) => [`${line}\r\nHost: sg.test\r\n\r\n${inner}`],
    expect: refused('505 http_version_not_supported'),
  })),
  ...['CONNECT /healthz', 'TRACE /healthz', 'PROPFIND /healthz', 'get /healthz', 'FOO-BAR /healthz', 'Post /events/x/y'].map((start) => ({
    name: `method: ${start.split(' ')[0]} is 501`,
    build: (_o: Outer, inner: string) => [`${start} HTTP/1.1\r\nHost: sg.test\r\n\r\n${inner}`],
    expect: refused('501 not_implemented'),
  })),
  {
    name: 'request line: bare LF ending it',
    build: (_o, inner) => [`GET /healthz HTTP/1.1\nHost: sg.test\r\n\r\n${inner}`],
    expect: { anyOf: [BAD_HEADER, BAD] },
  },
  {
    name: 'HTTP/1.0: served, then the connection closes (what follows never runs)',
    build: (_o, inner) => [`GET /healthz HTTP/1.0\r\n\r\n${inner}`],
    expect: ['200'],
  },
  {
    name: 'HTTP/1.0 asking for keep-alive: served, still closed',
    build: (_o, inner) => [`GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n${inner}`],
    expect: ['200'],
  },
  {
    name: 'HTTP/1.0 POST with a Content-Length body holding the inner request',
    build: (o, inner) => [`${head(o, `Content-Length: ${len(inner)}\r\n`).replace(' HTTP/1.1\r\n', ' HTTP/1.0\r\n')}${inner}`],
    expect: SERVED,
  },
  {
    name: 'absolute-form POST with the inner request as its body',
    build: (o, inner) => [`${head(o, `Content-Length: ${len(inner)}\r\n`, 'Host: elsewhere.example\r\n').replace(`POST ${o.path}`, `POST http://sg.test:8080${o.path}`)}${inner}`],
    expect: SERVED,
  },
);

/** Header-field refusals: the outer POST's head is bad, its body is the inner request. */
const fieldCases: DesyncCase[] = [
  ['bare LF ending a field line', 'X-A: 1\n'],
  ['bare LF in the middle of the head', 'X-A: 1\nX-B: 2\r\n'],
  ['obs-fold (SP)', 'X-A: 1\r\n folded\r\n'],
  ['obs-fold (HTAB)', 'X-A: 1\r\n\tfolded\r\n'],
  ['a line without a colon', 'NoColon\r\n'],
  ['whitespace between name and colon', 'X-A : 1\r\n'],
  ['a tab between name and colon', 'X-A\t: 1\r\n'],
  ['NUL in a name', 'X-\0A: 1\r\n'],
  ['a space in a name', 'X A: 1\r\n'],
  ['( in a name', 'X(A: 1\r\n'],
  ['@ in a name', 'X@A: 1\r\n'],
  ['a byte >= 0x80 in a name', 'X-\xe9: 1\r\n'],
  ['an empty name', ': 1\r\n'],
].map(([what, line]) => ({
  name: `field line: ${what}`,
  build: (o: Outer, inner: string) => [`${head(o, `${line}Content-Length: ${len(inner)}\r\n`)}${inner}`],
  expect: BAD_HEADER,
}));
fieldCases.push(
  {
    name: 'field line: whitespace before the first field (a fold of the request line)',
    build: (o, inner) => [`${head(o, `Content-Length: ${len(inner)}\r\n`).replace(' HTTP/1.1\r\n', ' HTTP/1.1\r\n X-A: 1\r\n')}${inner}`],
    expect: BAD_HEADER,
  },
  ...[
    ['no Host', ''],
    ['two Host fields', 'Host: sg.test\r\nHost: other.example\r\n'],
    ['two identical Host fields', 'Host: sg.test\r\nHost: sg.test\r\n'],
    ['a space in Host', 'Host: sg .test\r\n'],
    ['/ in Host', 'Host: sg.test/x\r\n'],
    ['@ in Host', 'Host: user@sg.test\r\n'],
    ['a control byte in Host', 'Host: sg\x01test\r\n'],
  ].map(([what, host]) => ({
    name: `Host: ${what}`,
    build: (o: Outer, inner: string) => [`${head(o, `Content-Length: ${len(inner)}\r\n`, host)}${inner}`],
    expect: BAD,
  })),
  {
    name: 'more than 100 header fields',
    build: (o, inner) => [`${head(o, `${Array.from({ length: 97 }, (_, i) => `X-F${i}: ${i}\r\n`).join('')}Content-Length: ${len(inner)}\r\n`)}${inner}`],
    expect: refused('431 header_too_large'),
  },
  {
    name: 'a head over 16 KiB',
    build: (o, inner) => [`${head(o, `X-Big: ${'b'.repeat(16_400)}\r\nContent-Length: ${len(inner)}\r\n`)}${inner}`],
    expect: refused('431 header_too_large'),
  },
  {
    name: 'a head over 16 KiB written in 1 KiB pieces',
    build: (o, inner) => {
      const all = `${head(o, `X-Big: ${'b'.repeat(16_400)}\r\nContent-Length: ${len(inner)}\r\n`)}${inner}`;
      return Array.from({ length: Math.ceil(all.length / 1024) }, (_, i) => all.slice(i * 1024, (i + 1) * 1024));
    },
    expect: refused('431 header_too_large'),
  },
);

/** Content-Length: duplicated, malformed, too large; and well-formed oddities that must be served. */
const lengthCases: DesyncCase[] = [
  ['two different values (CL.CL)', (n: number) => `Content-Length: 0\r\nContent-Length: ${n}\r\n`],
  ['two identical values', (n: number) => `Content-Length: ${n}\r\nContent-Length: ${n}\r\n`],
  ['a list of two values', (n: number) => `Content-Length: ${n},${n}\r\n`],
  ['a list of two values with a space', (n: number) => `Content-Length: ${n}, ${n}\r\n`],
  ['a plus sign', (n: number) => `Content-Length: +${n}\r\n`],
  ['two numbers separated by a space', (n: number) => `Content-Length: ${n} ${n}\r\n`],
  ['hexadecimal', (n: number) => `Content-Length: 0x${n.toString(16)}\r\n`],
  ['negative', () => 'Content-Length: -1\r\n'],
  ['empty', () => 'Content-Length: \r\n'],
  ['a decimal point', (n: number) => `Content-Length: ${n}.0\r\n`],
  ['an exponent', () => 'Content-Length: 1e2\r\n'],
  ['a control byte', (n: number) => `Content-Length: ${n}\x0b\r\n`],
].map(([what, fields]) => ({
  name: `Content-Length: ${what as string}`,
  build: (o: Outer, inner: string) => [`${head(o, (fields as (n: number) => string)(len(inner)))}${inner}`],
  expect: BAD,
}));
lengthCases.push(
  {
    name: 'Content-Length: over the route limit',
    build: (o, inner) => [`${head(o, `Content-Length: ${MAX_BODY + 1}\r\n`)}${inner}`],
    expect: refused('413 payload_too_large'),
  },
  {
    name: 'Content-Length: 20 digits',
    build: (o, inner) => [`${head(o, 'Content-Length: 99999999999999999999\r\n')}${inner}`],
    expect: refused('413 payload_too_large'),
  },
  {
    name: 'Content-Length: leading zeros are still a length',
    build: (o, inner) => [`${head(o, `Content-Length: 0000${len(inner)}\r\n`)}${inner}`],
    expect: SERVED,
  },
  {
    name: 'Content-Length: optional whitespace around the value',
    build: (o, inner) => [`${head(o, `Content-Length: \t ${len(inner)} \t\r\n`)}${inner}`],
    expect: SERVED,
  },
  {
    name: 'Content-Length longer than what is sent, then FIN',
    build: (o, inner) => [`${head(o, `Content-Length: ${len(inner) + 10}\r\n`)}${inner}`],
    expect: BAD,
    midBody: true,
  },
  {
    name: 'CL.0: GET with a Content-Length body holding the inner request',
    build: (_o, inner) => [`GET /healthz HTTP/1.1\r\nHost: sg.test\r\nContent-Length: ${len(inner)}\r\n\r\n${inner}`],
    expect: ['200'],
  },
  {
    name: 'CL.0: POST to a GET-only path with a body holding the inner request',
    build: (_o, inner) => [`POST /healthz HTTP/1.1\r\nHost: sg.test\r\nContent-Length: ${len(inner)}\r\n\r\n${inner}`],
    // A known path, another method: 405 with Allow (the body is read and dropped all the same).
    expect: ['405 method_not_allowed'],
  },
  {
    name: 'CL.0: DELETE of an unknown path with a body holding the inner request',
    build: (_o, inner) => [`DELETE /no/such/path HTTP/1.1\r\nHost: sg.test\r\nContent-Length: ${len(inner)}\r\n\r\n${inner}`],
    expect: ['404 not_found'],
  },
);

/** Transfer-Encoding with Content-Length (CL.TE, TE.CL) and the TE.TE obfuscations. */
const teCases: DesyncCase[] = [
  {
    name: 'CL.TE: Content-Length and Transfer-Encoding: chunked',
    build: (o, inner) => [`${head(o, `Content-Length: ${5 + len(inner)}\r\nTransfer-Encoding: chunked\r\n`)}0\r\n\r\n${inner}`],
    expect: BAD,
  },
  {
    name: 'TE.CL: Transfer-Encoding: chunked and a short Content-Length',
    build: (o, inner) => [`${head(o, 'Transfer-Encoding: chunked\r\nContent-Length: 4\r\n')}${chunk(inner)}0\r\n\r\n`],
    expect: BAD,
  },
  {
    name: 'CL.TE: Content-Length: 0 and chunked',
    build: (o, inner) => [`${head(o, 'Content-Length: 0\r\nTransfer-Encoding: chunked\r\n')}${chunk(inner)}0\r\n\r\n`],
    expect: BAD,
  },
];
const withLength = (te: string) => (o: Outer, inner: string) => [`${head(o, `Content-Length: ${5 + len(inner)}\r\n${te}`)}0\r\n\r\n${inner}`];
const chunkedBody = (te: string) => (o: Outer, inner: string) => [`${head(o, te)}${chunk(inner)}0\r\n\r\n`];
teCases.push(
  { name: 'TE.TE: Transfer-Encoding : chunked (space before the colon) with CL', build: withLength('Transfer-Encoding : chunked\r\n'), expect: BAD_HEADER },
  { name: 'TE.TE: Transfer-Encoding : chunked (space before the colon) alone', build: chunkedBody('Transfer-Encoding : chunked\r\n'), expect: BAD_HEADER },
  { name: 'TE.TE: Transfer-Encoding:<TAB>chunked with CL', build: withLength('Transfer-Encoding:\tchunked\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: xchunked with CL', build: withLength('Transfer-Encoding: xchunked\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: xchunked alone', build: chunkedBody('Transfer-Encoding: xchunked\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: chunked-false alone', build: chunkedBody('Transfer-Encoding: chunked-false\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: identity alone', build: chunkedBody('Transfer-Encoding: identity\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: chunked, identity', build: chunkedBody('Transfer-Encoding: chunked, identity\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: chunked;q=1', build: chunkedBody('Transfer-Encoding: chunked;q=1\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: chunked, chunked', build: chunkedBody('Transfer-Encoding: chunked, chunked\r\n'), expect: BAD },
  { name: 'TE.TE: chunked on two Transfer-Encoding lines', build: chunkedBody('Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-encoding: x then Transfer-Encoding: chunked', build: chunkedBody('Transfer-encoding: x\r\nTransfer-Encoding: chunked\r\n'), expect: refused('501 not_implemented') },
  {
    name: 'TE.TE: Transfer-encoding: x then Transfer-Encoding: chunked, with CL',
    build: withLength('Transfer-encoding: x\r\nTransfer-Encoding: chunked\r\n'),
    expect: { anyOf: [BAD, refused('501 not_implemented')] },
  },
  { name: 'TE.TE: Transfer-Encoding: chunked then Transfer-encoding: x', build: chunkedBody('Transfer-Encoding: chunked\r\nTransfer-encoding: x\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: gzip, chunked', build: chunkedBody('Transfer-Encoding: gzip, chunked\r\n'), expect: refused('501 not_implemented') },
  { name: 'TE.TE: Transfer-Encoding:\\n chunked (bare LF, fold) with CL', build: withLength('Transfer-Encoding:\n chunked\r\n'), expect: BAD_HEADER },
  { name: 'TE.TE: X: X\\nTransfer-Encoding: chunked (bare LF) with CL', build: withLength('X: X\nTransfer-Encoding: chunked\r\n'), expect: BAD_HEADER },
  { name: 'TE.TE: folded Transfer-Encoding value', build: chunkedBody('Transfer-Encoding: x\r\n chunked\r\n'), expect: BAD_HEADER },
  { name: 'TE.TE: NUL in the Transfer-Encoding name', build: chunkedBody('Transfer-Encoding\0: chunked\r\n'), expect: BAD_HEADER },
  { name: 'TE.TE: Transfer-Encoding: \\x0bchunked', build: chunkedBody('Transfer-Encoding: \x0bchunked\r\n'), expect: { anyOf: [BAD, BAD_HEADER] } },
  { name: 'TE.TE: Transfer-Encoding: chunked\\0', build: chunkedBody('Transfer-Encoding: chunked\0\r\n'), expect: { anyOf: [BAD, BAD_HEADER] } },
  // Whitespace to JavaScript's trim() but not to HTTP (OWS is SP / HTAB only): none of these is `chunked`.
  ...[
    ['\\x0bchunked (VT)', '\x0bchunked'],
    ['chunked\\x0b', 'chunked\x0b'],
    ['\\x0cchunked (FF)', '\x0cchunked'],
    ['\\xa0chunked (NBSP)', '\xa0chunked'],
    ['\\rchunked (bare CR)', '\rchunked'],
  ].map(([what, value]) => ({ name: `TE.TE: Transfer-Encoding: ${what}, with CL`, build: withLength(`Transfer-Encoding: ${value}\r\n`), expect: { anyOf: [BAD, BAD_HEADER] } })),
  ...[
    ['\\x0cchunked (FF)', '\x0cchunked'],
    ['chunked\\x0b', 'chunked\x0b'],
    ['\\xa0chunked (NBSP)', '\xa0chunked'],
    ['\\rchunked (bare CR)', '\rchunked'],
  ].map(([what, value]) => ({ name: `TE.TE: Transfer-Encoding: ${what} alone`, build: chunkedBody(`Transfer-Encoding: ${value}\r\n`), expect: { anyOf: [BAD, BAD_HEADER] } })),
  { name: 'TE.TE: Transfer-Encoding: "chunked"', build: chunkedBody('Transfer-Encoding: "chunked"\r\n'), expect: BAD },
  { name: 'TE.TE: Transfer-Encoding: chunked with CL first', build: (o, inner) => [`${head(o, `Transfer-Encoding: chunked\r\nContent-Length: ${5 + len(inner)}\r\n`)}0\r\n\r\n${inner}`], expect: BAD },
  {
    name: 'TE in an HTTP/1.0 request',
    build: (o, inner) => [`${head(o, 'Transfer-Encoding: chunked\r\n').replace(' HTTP/1.1\r\n', ' HTTP/1.0\r\n')}${chunk(inner)}0\r\n\r\n`],
    expect: BAD,
  },
  // Served: the inner request is chunk data, i.e. part of the body.
  { name: 'TE: Transfer-Encoding: Chunked (case is irrelevant)', build: chunkedBody('Transfer-Encoding: Chunked\r\n'), expect: SERVED },
  { name: 'TE: Transfer-Encoding: CHUNKED', build: chunkedBody('Transfer-Encoding: CHUNKED\r\n'), expect: SERVED },
  { name: 'TE: Transfer-Encoding:<TAB>chunked<TAB> (OWS)', build: chunkedBody('Transfer-Encoding:\tchunked\t\r\n'), expect: SERVED },
  {
    name: 'TE: Transfer_Encoding is another header: Content-Length frames the body',
    build: (o, inner) => [`${head(o, `Content-Length: ${5 + len(inner)}\r\nTransfer_Encoding: chunked\r\n`)}0\r\n\r\n${inner}`],
    expect: SERVED,
  },
  {
    name: 'TE: GET /healthz with a chunked body holding the inner request',
    build: (_o, inner) => [`GET /healthz HTTP/1.1\r\nHost: sg.test\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(inner)}0\r\n\r\n`],
    expect: ['200'],
  },
  {
    name: 'TE: OPTIONS of an unknown path with a chunked body',
    build: (_o, inner) => [`OPTIONS /no/such/path HTTP/1.1\r\nHost: sg.test\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(inner)}0\r\n\r\n`],
    expect: ['404 not_found'],
  },
);

/** Chunk sizes, extensions, CRLFs after data, trailers. */
const TE = 'Transfer-Encoding: chunked\r\n';
const chunkedWith = (body: (inner: string) => string) => (o: Outer, inner: string) => [`${head(o, TE)}${body(inner)}`];
const hex = (s: string) => len(s).toString(16);
const chunkCases: DesyncCase[] = [
  { name: 'chunk: 5;a style extension without value', build: chunkedWith((i) => `${hex(i)};a\r\n${i}\r\n0\r\n\r\n`), expect: SERVED },
  { name: 'chunk: whitespace before ; and a token value', build: chunkedWith((i) => `${hex(i)} ;a=b\r\n${i}\r\n0\r\n\r\n`), expect: SERVED },
  { name: 'chunk: a quoted value holding ;', build: chunkedWith((i) => `${hex(i)};a="b;c"\r\n${i}\r\n0\r\n\r\n`), expect: SERVED },
  { name: 'chunk: several extensions with whitespace', build: chunkedWith((i) => `${hex(i)} ; a = b ;c;d="e f"\r\n${i}\r\n0;z\r\n\r\n`), expect: SERVED },
  { name: 'chunk: leading zeros', build: chunkedWith((i) => `000000${hex(i)}\r\n${i}\r\n0000\r\n\r\n`), expect: SERVED },
  { name: 'chunk: upper-case hex', build: chunkedWith((i) => `${hex(i).toUpperCase()}\r\n${i}\r\n0\r\n\r\n`), expect: SERVED },
  {
    // A parser reading only the first digit would see "hello", a last chunk, then the inner request.
    name: 'chunk: a multi-digit size is read whole (0x500 bytes, not 5)',
    build: chunkedWith((i) => `500\r\n${`hello\r\n0\r\n\r\n${i}`.padEnd(0x500, ' ')}\r\n0\r\n\r\n`),
    expect: SERVED,
  },
  { name: 'chunk: a trailer field', build: chunkedWith((i) => `${chunk(i)}0\r\nX-Trailer: 1\r\n\r\n`), expect: SERVED },
  {
    name: 'chunk: framing fields in the trailer are ignored',
    build: chunkedWith((i) => `${chunk(i)}0\r\nContent-Length: 300\r\nTransfer-Encoding: chunked\r\nHost: evil.example\r\n\r\n`),
    expect: SERVED,
  },
  { name: 'chunk: size of 17 hex digits', build: chunkedWith((i) => `fffffffffffffffff\r\n${i}\r\n0\r\n\r\n`), expect: refused('413 payload_too_large') },
  { name: 'chunk: size of 16 hex digits', build: chunkedWith((i) => `ffffffffffffffff\r\n${i}\r\n0\r\n\r\n`), expect: refused('413 payload_too_large') },
  { name: 'chunk: one chunk over the limit', build: chunkedWith((i) => `${(MAX_BODY + 1).toString(16)}\r\n${i}\r\n0\r\n\r\n`), expect: refused('413 payload_too_large') },
  {
    name: 'chunk: chunks adding up to over the limit',
    build: chunkedWith((i) => `${chunk('x'.repeat(1500))}${chunk('y'.repeat(600))}${chunk(i)}0\r\n\r\n`),
    expect: refused('413 payload_too_large'),
  },
  ...[
    ['a non-hex size', 'g'],
    ['a 0x prefix', '0x5'],
    ['a negative size', '-1'],
    ['a space before the size', ' 5'],
    ['an empty size', ''],
    ['an extension without a size', ';a'],
    ['a size with a trailing non-hex letter', '5z'],
    ['an extension name that is not a token', '5;"a"'],
    ['an unterminated quoted extension', '5;a="b'],
    ['a control byte in an extension', '5;a\x01'],
    ['NUL after the size', '5\0'],
  ].map(([what, size]) => ({
    name: `chunk: ${what}`,
    build: chunkedWith((i) => `${size}\r\nhello\r\n${chunk(i)}0\r\n\r\n`),
    expect: BAD,
  })),
  { name: 'chunk: data longer than its size (no CRLF after the data)', build: chunkedWith((i) => `5\r\nhelloXX\r\n${chunk(i)}0\r\n\r\n`), expect: BAD },
  { name: 'chunk: size smaller than the data', build: chunkedWith((i) => `${(len(i) - 10).toString(16)}\r\n${i}\r\n0\r\n\r\n`), expect: BAD },
  { name: 'chunk: a bare LF after the data', build: chunkedWith((i) => `${hex(i)}\r\n${i}\n0\r\n\r\n`), expect: BAD },
  { name: 'chunk: a bare LF ending the size line', build: chunkedWith((i) => `${hex(i)}\n${i}\r\n0\r\n\r\n`), expect: BAD },
  { name: 'chunk: a bare CR ending the size line', build: chunkedWith((i) => `${hex(i)}\r${i}\r\n0\r\n\r\n`), expect: BAD },
  { name: 'chunk: a bare LF ending the last chunk', build: chunkedWith((i) => `${chunk(i)}0\n\r\n`), expect: BAD },
  { name: 'chunk: a trailer that looks like a request', build: (o, _i, request) => [`${head(o, TE)}${chunk('hi')}0\r\n${request}`], expect: BAD },
  { name: 'chunk: a folded trailer line', build: chunkedWith((i) => `${chunk(i)}0\r\nX-T: a\r\n b\r\n\r\n`), expect: BAD },
  { name: 'chunk: a trailer line without a colon', build: chunkedWith((i) => `${chunk(i)}0\r\nnocolon\r\n\r\n`), expect: BAD },
  { name: 'chunk: a trailer ended by a bare LF', build: chunkedWith((i) => `${chunk(i)}0\r\nX-T: 1\n\r\n`), expect: BAD },
  { name: 'chunk: no last chunk, then FIN', build: chunkedWith((i) => `${chunk(i)}`), expect: BAD },
  { name: 'chunk: no end of trailers, then FIN', build: chunkedWith((i) => `${chunk(i)}0\r\nX-T: 1\r\n`), expect: BAD },
];

for (const k of chunkCases) if (k.expect !== SERVED) k.midBody = true;

/** PROXY protocol headers from the client, anywhere. */
const proxyCases: DesyncCase[] = [
  { name: 'PROXY v1 at the start', build: (_o, inner) => [`${v1}${inner}`], expect: BAD },
  { name: 'PROXY v2 at the start', build: (_o, inner) => [`${v2}${inner}`], expect: BAD },
  { name: 'PROXY v2 LOCAL at the start', build: (_o, inner) => [`${proxyV2Local().toString('latin1')}${inner}`], expect: BAD },
  { name: 'PROXY v2 after empty lines', build: (_o, inner) => [`\r\n\r\n${v2}${inner}`], expect: BAD },
  { name: 'PROXY v2 after a complete first request', build: (_o, inner) => [`${HEALTH}${v2}${inner}`], expect: ['200', '400 bad_request'] },
  { name: 'PROXY v1 after a complete first request', build: (_o, inner) => [`${HEALTH}${v1}${inner}`], expect: ['200', '400 bad_request'] },
  { name: 'PROXY v2 after a complete first request, in a later packet', build: (_o, inner) => [HEALTH, { pause: 30 }, `${v2}${inner}`], expect: ['200', '400 bad_request'] },
  {
    // Its leading CRLF ends the head; the rest is not a request.
    name: 'PROXY v2 inside a head',
    build: (_o, inner) => [`GET /healthz HTTP/1.1\r\nHost: sg.test\r\n${v2}${inner}`],
    expect: ['200', '400 bad_request'],
  },
  {
    name: 'PROXY v2 after a Content-Length body',
    build: (o, inner) => [`${head(o, 'Content-Length: 2\r\n')}{}${v2}${inner}`],
    expect: ['SERVED', '400 bad_request'],
  },
  {
    name: 'PROXY v2 after a chunked body',
    build: (o, inner) => [`${head(o, TE)}${chunk('{}')}0\r\n\r\n${v2}${inner}`],
    expect: ['SERVED', '400 bad_request'],
  },
  { name: 'PROXY v2 in a chunk-size line', build: (o, inner) => [`${head(o, TE)}${chunk('{}')}${v2}${inner}`], expect: BAD, midBody: true },
  { name: 'PROXY v1 in a chunk-size line', build: (o, inner) => [`${head(o, TE)}${chunk('{}')}${v1}${inner}`], expect: BAD, midBody: true },
  {
    // Its CRLF ends the trailers: the request is complete; the rest is not a request.
    name: 'PROXY v2 in place of the trailers',
    build: (o, inner) => [`${head(o, TE)}${chunk('{}')}0\r\n${v2}${inner}`],
    expect: ['SERVED', '400 bad_request'],
  },
  { name: 'PROXY v2 after a refused request', build: (o, inner) => [`${head(o, 'Content-Length: 1\r\nContent-Length: 1\r\n')}x${v2}${inner}`], expect: BAD },
];

/** Pipelining and half-close around the inner request. */
const streamCases: DesyncCase[] = [
  {
    name: 'pipelined: a refused request between a served one and the inner request',
    build: (o, inner) => [`${HEALTH}${head(o, 'Content-Length: 0\r\nContent-Length: 0\r\n')}${inner}`],
    expect: ['200', '400 bad_request'],
  },
  {
    name: 'pipelined: a refused request in a later packet',
    build: (_o, inner) => [HEALTH, { pause: 30 }, `GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n${inner}`],
    expect: ['200', '400 bad_request'],
  },
  { name: 'half-close: a head cut short', build: (o) => [`POST ${o.path} HTTP/1.1\r\nHost: sg.test\r\n`], expect: BAD },
  { name: 'half-close: a request line cut short', build: (o) => [`POST ${o.path}`], expect: BAD },
];

const catalogue: DesyncCase[] = [...requestLineCases, ...fieldCases, ...lengthCases, ...teCases, ...chunkCases, ...proxyCases, ...streamCases];

async function runCatalogue(t: Test, cases: readonly DesyncCase[], outer: Outer, queue: 'smuggle' | 'allow'): Promise<void> {
  const c = await pool(cases, 8, async (k) => {
    const request = innerEvent(queue, k.name);
    const inner = queue === 'allow' ? `${v2}${request}` : request;
    const steps = k.build(outer, inner, request);
    const sub = (list: readonly string[]) => list.map((s) => (s === 'SERVED' ? outer.served : s));
    let alternatives = 'anyOf' in k.expect ? k.expect.anyOf.map(sub) : [sub(k.expect)];
    if (k.midBody && queue === 'allow') alternatives = [...alternatives, ...alternatives.map((a) => [outer.served, ...a])];
    const expect: Expected = { anyOf: alternatives };
    const conv = await expectConversation(t, k.name, steps, expect, { gapMs: 2 });
    return { k, conv, steps };
  });
  if (queue === 'allow') {
    for (const { k, conv, steps } of c) {
      if (conv.responses.some((r) => r.status === 202)) t.fail(`${k.name}: a 202 on a connection smuggling a PROXY header to the allowlisted queue\n${transcript(steps, conv)}`);
    }
  }
}

// ---- the catalogue ---------------------------------------------------------------
t.test('smuggling catalogue: answers in order, then the connection closes; the inner event request never runs', async (t) => {
  await runCatalogue(t, catalogue, DECOY, 'smuggle');
});

t.test('allowlisted queue: a direct POST from 127.0.0.1 is 403 ip_not_allowed; the address reaches the app', async (t) => {
  const direct = await api.postEvent('allow', JSON.stringify({ marker: `${SMUGGLED}-direct` }), { 'x-service-partition-key': LANE });
  t.equal(direct.status, 403);
  t.equal(direct.body?.error?.code, 'ip_not_allowed');
  const local = await api.postEvent('local', '{}');
  t.equal(local.status, 202, "a queue allowing 127.0.0.1/32 accepts: the socket's peer is the client");
  if (local.status === 202) accepted++;
});

t.test('allowlisted queue: a PROXY v2 header naming 203.0.113.7 smuggled by every desync class never yields 202', async (t) => {
  await runCatalogue(t, catalogue, ALLOW, 'allow');
});

// ---- request line and methods -------------------------------------------------
t.test('request line: versions, methods, targets that are served', async (t) => {
  await expectConversation(t, 'empty lines before the request line are ignored', [`\r\n\r\n${HEALTH}`], ['200']);
  await expectConversation(t, 'HTTP/1.2 is served as 1.1 (keep-alive)', [`GET /healthz HTTP/1.2\r\nHost: sg.test\r\n\r\n${HEALTH}`], ['200', '200']);
  await expectConversation(t, 'HTTP/1.9 is served as 1.1', [`GET /healthz HTTP/1.9\r\nHost: sg.test\r\n\r\n`], ['200']);
  await expectConversation(t, 'HTTP/1.2 needs a Host as 1.1 does', [`GET /healthz HTTP/1.2\r\n\r\n`], BAD);
  await expectConversation(t, 'HTTP/1.1 without Host', [`GET /healthz HTTP/1.1\r\n\r\n`], BAD);
  await expectConversation(t, 'HTTP/1.0 without Host is served', ['GET /healthz HTTP/1.0\r\n\r\n'], ['200']);
  await expectConversation(t, 'HTTP/1.0: the server closes after the answer without waiting for the client', ['GET /healthz HTTP/1.0\r\n\r\n'], ['200'], { halfClose: false, timeoutMs: 3_000 });
  const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  await expectConversation(
    t,
    'the seven methods are served, pipelined, in order (unknown path: 404)',
    [methods.map((m) => `${m} /no/such/path HTTP/1.1\r\nHost: sg.test\r\n${m === 'POST' || m === 'PUT' || m === 'PATCH' ? 'Content-Length: 2\r\n\r\n{}' : '\r\n'}`).join('')],
    ['404 not_found', '404', '404 not_found', '404 not_found', '404 not_found', '404 not_found', '404 not_found'],
    { headResponses: [1] },
  );
  const star = await expectConversation(t, 'OPTIONS * is 204 with an allow header, then the connection goes on', [`OPTIONS * HTTP/1.1\r\nHost: sg.test\r\n\r\n${HEALTH}`], ['204', '200']);
  t.ok(star.responses[0] && header(star.responses[0], 'allow'), 'OPTIONS * names the methods in allow');
  t.ok(star.responses[0] && header(star.responses[0], 'x-request-id'), 'OPTIONS * carries an X-Request-Id like every answer');
  const named = await expectConversation(t, 'OPTIONS * echoes a sane X-Request-Id', [`OPTIONS * HTTP/1.1\r\nHost: sg.test\r\nX-Request-Id: star-42\r\n\r\n`], ['204']);
  t.equal(named.responses[0] && header(named.responses[0], 'x-request-id'), 'star-42');
  await expectConversation(
    t,
    'absolute-form GET with a port and a query',
    [`GET http://sg.test:8080/healthz?x=1 HTTP/1.1\r\nHost: other.example\r\n\r\n${HEALTH}`],
    ['200', '200'],
  );
  await expectConversation(t, 'absolute-form to an unknown path', [`GET http://sg.test/no/such/path HTTP/1.1\r\nHost: sg.test\r\n\r\n`], ['404 not_found']);
  const before = await countRecords(backends);
  const body = JSON.stringify({ absolute: RUN });
  await expectConversation(
    t,
    'absolute-form POST of an event',
    [`POST http://sg.test/events/${tenant}/decoy HTTP/1.1\r\nHost: sg.test\r\nX-Api-Key: ${KEY}\r\nContent-Length: ${body.length}\r\n\r\n${body}`],
    ['202'],
  );
  t.equal(await countRecords(backends), before + 1);
});

t.test('refusals close the connection without waiting for the client', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['a malformed request line', 'GET  /healthz HTTP/1.1\r\nHost: sg.test\r\n\r\n', '400 bad_request'],
    ['HTTP/2.0', 'GET /healthz HTTP/2.0\r\nHost: sg.test\r\n\r\n', '505 http_version_not_supported'],
    ['TRACE', 'TRACE /healthz HTTP/1.1\r\nHost: sg.test\r\n\r\n', '501 not_implemented'],
    ['obs-fold', 'GET /healthz HTTP/1.1\r\nHost: sg.test\r\nX-A: 1\r\n 2\r\n\r\n', '400 invalid_header'],
    ['two Content-Length fields', `${head(DECOY, 'Content-Length: 2\r\nContent-Length: 2\r\n')}{}`, '400 bad_request'],
    ['CL and TE', `${head(DECOY, 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n')}0\r\n\r\n`, '400 bad_request'],
    ['a bad chunk size', `${head(DECOY, TE)}zz\r\n`, '400 bad_request'],
    ['a body over the limit', head(DECOY, `Content-Length: ${MAX_BODY + 1}\r\n`), '413 payload_too_large'],
    ['PROXY v2', `${v2}${HEALTH}`, '400 bad_request'],
  ];
  await pool(cases, 4, ([what, bytes, answer]) => expectConversation(t, what, [bytes], [answer], { halfClose: false, timeoutMs: 4_000 }));
});

t.test('a head over 16 KiB written in pieces without its end is refused as soon as it is over', async (t) => {
  const pieces: Step[] = ['POST /events/x/y HTTP/1.1\r\nHost: sg.test\r\n'];
  for (let i = 0; i < 18; i++) pieces.push(`X-Fill-${i}: ${'f'.repeat(1000)}\r\n`);
  await expectConversation(t, '431 before the head ends', pieces, ['431 header_too_large'], { halfClose: false, gapMs: 3, timeoutMs: 4_000 });
});

t.test('lingering close: a client still uploading a refused body gets the answer, then FIN', async (t) => {
  const piece = 'x'.repeat(64 * 1024);
  const steps: Step[] = [head(DECOY, 'Content-Length: 10000000\r\n')];
  for (let i = 0; i < 12; i++) steps.push(piece);
  await expectConversation(t, '413 while the body streams', steps, ['413 payload_too_large'], { gapMs: 5, timeoutMs: 8_000 });
});

// ---- header fields ------------------------------------------------------------
t.test('header fields: counts, sizes and token names that are served', async (t) => {
  const fill = (n: number) => Array.from({ length: n }, (_, i) => `X-F${i}: ${i}\r\n`).join('');
  await expectConversation(t, '60 fields', [`GET /healthz HTTP/1.1\r\nHost: sg.test\r\n${fill(59)}\r\n`], ['200']);
  await expectConversation(t, '100 fields', [`GET /healthz HTTP/1.1\r\nHost: sg.test\r\n${fill(99)}\r\n`], ['200']);
  await expectConversation(t, '101 fields', [`GET /healthz HTTP/1.1\r\nHost: sg.test\r\n${fill(100)}\r\n`], ['431 header_too_large']);
  // Heads up to 16 KiB are served, whether they arrive in one read or several
  // (a large head often spans reads): each size is tried a few dozen times, and
  // every try must be served.
  for (const size of [4_100, 8_000, 15 * 1024]) {
    const answers = new Map<string, number>();
    let sample: Conversation | null = null;
    const steps = [`GET /healthz HTTP/1.1\r\nHost: sg.test\r\nX-Big: ${'b'.repeat(size)}\r\n\r\n`];
    for (let i = 0; i < 30; i++) {
      const c = await converse(node.port, steps);
      const got = c.responses.map(describe).join(',') || `no answer (${c.ending})`;
      answers.set(got, (answers.get(got) ?? 0) + 1);
      if (got !== '200') sample ??= c;
    }
    t.same([...answers], [['200', 30]], `a head of ${size + 40} bytes, 30 times: always served${sample ? `\n${transcript(steps, sample)}` : ''}`);
  }
  const events = [`${head(DECOY, 'Content-Length: 2\r\n' + fill(60))}{}`, `${head(DECOY, 'Content-Length: 2\r\n' + fill(90))}{}`];
  await expectConversation(t, 'an event with 60 and one with 90 more fields, pipelined', [events.join('')], ['202', '202']);

  const body = JSON.stringify({ tokens: RUN });
  const res = await expectConversation(
    t,
    'header names with _ . ! ~ \' # | reach the app exactly',
    [
      `POST /events/${tenant}/tokens HTTP/1.1\r\nHost: sg.test\r\nX-Api-Key: ${KEY}\r\nContent-Type: application/json\r\n` +
        `x_group: grp-${RUN}\r\nx.part~: part-${RUN}\r\nx!type': type-${RUN}\r\nx#trace|: trace-${RUN}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    ],
    ['202'],
  );
  const id = (JSON.parse(res.responses[0]?.body.toString() || '{}') as { eventId?: string }).eventId;
  const record = (await readRecords(backends)).find((r) => r.id === id);
  t.match(record, { groupKey: `grp-${RUN}`, partitionKey: `part-${RUN}`, eventType: `type-${RUN}`, mappedHeaders: [['X-Trace', `trace-${RUN}`]] }, 'every value arrived under its name');
});

t.test('header values with bytes >= 0x80 or controls reach the ordinary checks', async (t) => {
  const post = (fields: string, body = '{}') => [`${head(DECOY, `${fields}Content-Length: ${body.length}\r\n`)}${body}`];
  await expectConversation(t, 'a control byte in the group key', post('X-Service-Group-Key: g\x01h\r\n'), ['400 context_group_key_invalid']);
  await expectConversation(t, 'NUL in the event type', post('X-Service-Event-Type: a\0b\r\n'), ['400 context_event_type_key_invalid']);
  await expectConversation(t, 'ESC in the partition key', post('X-Service-Partition-Key: \x1bp\r\n'), ['400 context_partition_key_invalid']);
  await expectConversation(t, 'a control byte in the API key', [`POST ${DECOY.path} HTTP/1.1\r\nHost: sg.test\r\nX-Api-Key: ${KEY}\x01\r\nContent-Length: 2\r\n\r\n{}`], ['401 invalid_api_key']);
  await expectConversation(t, 'a byte that is not UTF-8 in another header', post('X-Trace: a\xff\xfeb\r\n'), ['400 invalid_header']);
  await expectConversation(t, 'DEL in another header', post('X-Trace: a\x7fb\r\n'), ['400 invalid_header']);
  const body = JSON.stringify({ utf8: RUN });
  const ok = await expectConversation(t, 'valid UTF-8 arrives whole', post('X-Service-Group-Key: caf\xc3\xa9\r\nX-Service-Event-Type: commande.cr\xc3\xa9\xc3\xa9e\r\n', body), ['202']);
  const id = (JSON.parse(ok.responses[0]?.body.toString() || '{}') as { eventId?: string }).eventId;
  const record = (await readRecords(backends)).find((r) => r.id === id);
  t.match(record, { groupKey: 'café', eventType: 'commande.créée' });
});

t.test('Expect: 100-continue: 100 Continue after the head, then the final answer', async (t) => {
  const body = JSON.stringify({ expect: RUN });
  const c = await expectConversation(
    t,
    'expect 100-continue',
    [
      `${head(DECOY, `Expect: 100-continue\r\nContent-Length: ${body.length}\r\n`)}`,
      { until: (r) => r.includes('\r\n\r\n'), what: 'the 100 Continue' },
      body,
    ],
    ['100', '202'],
    { timeoutMs: 4_000 },
  );
  t.ok(c.raw.toString('latin1').startsWith('HTTP/1.1 100 Continue\r\n\r\n'), `exactly "HTTP/1.1 100 Continue\\r\\n\\r\\n" first: ${JSON.stringify(c.raw.toString('latin1').slice(0, 40))}`);
  await expectConversation(
    t,
    'expect 100-continue on a chunked body',
    [`${head(DECOY, `Expect: 100-continue\r\n${TE}`)}`, { until: (r) => r.includes('\r\n\r\n'), what: 'the 100 Continue' }, `${chunk(body)}0\r\n\r\n`],
    ['100', '202'],
    { timeoutMs: 4_000 },
  );
});

// ---- chunked bodies, pipelining, half-close ----------------------------------------
t.test('chunked bodies: extensions and trailers are dropped, the data arrives exactly', async (t) => {
  const c = await expectConversation(
    t,
    'chunks with extensions and a trailer',
    [`${head(DECOY, 'Transfer-Encoding: chunked\r\n')}5;a\r\nhello\r\n6 ;a=b\r\n world\r\n1;a="b;c"\r\n!\r\n${RUN.length.toString(16)}\r\n${RUN}\r\n00000;end\r\nX-Trailer: 1\r\n\r\n`],
    ['202'],
  );
  const id = (JSON.parse(c.responses[0]?.body.toString() || '{}') as { eventId?: string }).eventId;
  const record = (await readRecords(backends)).find((r) => r.id === id);
  t.equal(record?.body.toString('latin1'), `hello world!${RUN}`, 'the body is the chunk data only');
});

t.test('pipelining: answers in order, all in one packet', async (t) => {
  const post = (n: number) => `${head(DECOY, `Content-Length: ${String(n).length}\r\n`)}${n}`;
  await expectConversation(t, 'three GETs', [HEALTH.repeat(3)], ['200', '200', '200']);
  await expectConversation(t, 'POST, GET, chunked POST, 404', [`${post(1)}${HEALTH}${head(DECOY, TE)}${chunk('{}')}0\r\n\r\nGET /nope HTTP/1.1\r\nHost: sg.test\r\n\r\n`], ['202', '200', '202', '404 not_found']);
  await expectConversation(
    t,
    'HEAD answer has no body: what follows is parsed in step',
    [`HEAD /no/such/path HTTP/1.1\r\nHost: sg.test\r\n\r\n${HEALTH}`],
    ['404', '200'],
    { headResponses: [0] },
  );
});

t.test('half-close: complete requests before FIN are answered, an incomplete one is 400', async (t) => {
  const before = await countRecords(backends);
  const body = JSON.stringify({ fin: RUN });
  await expectConversation(t, 'a complete POST then FIN', [`${head(DECOY, `Content-Length: ${body.length}\r\n`)}${body}`], ['202']);
  t.equal(await countRecords(backends), before + 1, 'the event was accepted');
  await expectConversation(t, 'a complete GET, then half a request, then FIN', [`${HEALTH}GET /heal`], ['200', '400 bad_request']);
  await expectConversation(t, 'a partial body then FIN', [`${head(DECOY, 'Content-Length: 10\r\n')}12345`], ['400 bad_request']);
  await expectConversation(t, 'a partial chunk then FIN', [`${head(DECOY, TE)}a\r\n12345`], ['400 bad_request']);
  await expectConversation(t, 'a partial chunk-size line then FIN', [`${head(DECOY, TE)}a`], ['400 bad_request']);
  await expectConversation(t, 'FIN right after the head of a bodiless request', [HEALTH], ['200']);
});

// ---- the same answers however the bytes are cut ------------------------------------
t.test('property: any cut of a conversation into pieces gives the answers of the whole', async (t) => {
  const body = JSON.stringify({ cut: RUN });
  const conversations: Array<{ name: string; bytes: string; expect: string[] }> = [
    { name: 'a POST with a body', bytes: `${head(DECOY, `Content-Length: ${body.length}\r\n`)}${body}`, expect: ['202'] },
    {
      name: 'a chunked POST with extensions and trailers',
      bytes: `${head(DECOY, TE)}3;a=b\r\n{"a\r\n4 ;x="y;z"\r\n":1}\r\n0;last\r\nX-T: 1\r\nX-U: 2\r\n\r\n`,
      expect: ['202'],
    },
    { name: 'a pipelined pair', bytes: `${HEALTH}${head(DECOY, `Content-Length: ${body.length}\r\n`)}${body}`, expect: ['200', '202'] },
    { name: 'a malformed request carrying an inner one', bytes: `${head(DECOY, 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n')}0\r\n\r\n${innerEvent('smuggle', 'property')}`, expect: ['400 bad_request'] },
  ];
  for (const conv of conversations) {
    await expectConversation(t, `${conv.name}, in one piece`, [conv.bytes], conv.expect);
  }
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...conversations),
      fc.uniqueArray(fc.integer({ min: 1, max: 10_000 }), { maxLength: 10 }),
      fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 10, maxLength: 10 }),
      async (conv, rawCuts, gaps) => {
        runs++;
        const cuts = [...new Set(rawCuts.map((c) => c % conv.bytes.length).filter((c) => c > 0))].sort((a, b) => a - b);
        const pieces: string[] = [];
        let from = 0;
        for (const cut of [...cuts, conv.bytes.length]) {
          pieces.push(conv.bytes.slice(from, cut));
          from = cut;
        }
        let gap = 0;
        const c = await converse(node.port, pieces, { gapMs: () => gaps[gap++ % gaps.length]! });
        account(c);
        const got = c.responses.map(describe);
        if (JSON.stringify(got) !== JSON.stringify(conv.expect) || c.ending !== 'closed') {
          throw new Error(`${conv.name} cut at ${JSON.stringify(cuts)}: ${JSON.stringify(got)} (${c.ending}), whole: ${JSON.stringify(conv.expect)}\n${transcript(pieces, c)}`);
        }
      },
    ),
    { numRuns: 80 },
  );
  t.pass(`${runs} random cuts answered as the whole`);
});

// ---- nothing smuggled ran -----------------------------------------------------------
t.test('nothing smuggled ran: a control event is delivered, no marker ever was; the log holds exactly the 202s', async (t) => {
  const control = JSON.stringify({ control: RUN });
  const res = await api.postEvent('smuggle', control, { 'x-service-partition-key': LANE });
  t.equal(res.status, 202, 'the control event is accepted');
  if (res.status === 202) accepted++;
  // Same ordering lane as every inner event: had one been accepted, it would be delivered before the control.
  await smuggleReceiver.waitFor((r) => r.some((x) => x.body.toString().includes(`"control":"${RUN}"`)), 30_000, 'the control event');
  const leaked = smuggleReceiver.requests.filter((r) => r.body.toString('latin1').includes(SMUGGLED));
  t.same(leaked.map((r) => r.body.toString('latin1')), [], 'the receiver never saw a smuggled event');
  t.same(allowReceiver.requests.map((r) => r.body.toString('latin1')), [], 'the allowlisted queue delivered nothing');
  const records = await readRecords(backends);
  const onRouted = records.filter((r) => (r.queueName === 'smuggle' || r.queueName === 'allow') && r.body.toString('latin1').includes(SMUGGLED));
  t.same(onRouted.map((r) => `${r.queueName}: ${r.body.toString('latin1')}`), [], 'no smuggled event in the log');
  t.equal(records.filter((r) => r.queueName === 'allow').length, 0, "the allowlisted queue's log is empty");
  t.equal(records.length, accepted, `the log holds exactly the ${accepted} events answered 202`);
  t.equal((await api.request('GET', '/healthz')).status, 200, 'still serving');
});
