import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { countRecords } from '../../helpers/topic.js';
import { allowedServerError, converse, describe, pool, proxyV1, proxyV2, proxyV2Local, transcript, type Conversation } from '../../helpers/http-conversation.js';

/**
 * A bounded fuzzer of the HTTP server (src/http/): mutated
 * requests (byte flips, inserted/deleted/duplicated CR, LF, SP, HTAB, NUL, `:`,
 * `;`, `,`, digits, duplicated header lines, case changes, Transfer-Encoding /
 * Content-Length injections, truncation, PROXY signatures, pipelining, writes
 * split into pieces) from a corpus of valid ones, each on a fresh connection
 * that the client half-closes once everything is written. By the parser's rules
 * every input but an empty one (or CRLFs only) gets at least one complete
 * answer, then FIN; no 5xx but 503 unavailable (and the refusals 501
 * not_implemented / 505 http_version_not_supported); every status line is
 * well-formed; at the end the node still answers and the log holds exactly the
 * events answered 202.
 *
 * Runs: STREAMGATE_FUZZ_RUNS (default 20,000: measured on the 2-core box this
 * was written on at 1,800-3,400 cases/s with 24 connections at a time, 6-11 s of cases
 * and 10-27 s for the whole file per backend, well inside a 90 s budget). Seed:
 * STREAMGATE_FUZZ_SEED, else the date (YYYYMMDD), printed first. Every case is
 * drawn from its own generator seeded by (seed, index), so one case replays on
 * its own: STREAMGATE_FUZZ_SEED=<seed> STREAMGATE_FUZZ_CASE=<index>. (The
 * tenant id and keys are new in every run, same lengths: a replay applies the
 * same mutations at the same offsets; a failure message prints the exact bytes.)
 */
const RUNS = Number(process.env.STREAMGATE_FUZZ_RUNS ?? 20_000);
const SEED = Number.isFinite(Number(process.env.STREAMGATE_FUZZ_SEED)) && process.env.STREAMGATE_FUZZ_SEED
  ? Number(process.env.STREAMGATE_FUZZ_SEED)
  : Number(new Date().toISOString().slice(0, 10).replace(/-/g, ''));
const ONLY = process.env.STREAMGATE_FUZZ_CASE === undefined ? null : Number(process.env.STREAMGATE_FUZZ_CASE);
const CONCURRENCY = 24;
t.comment(`fuzz seed ${SEED}, ${ONLY === null ? `${RUNS} cases` : `case ${ONLY} only`} (replay: STREAMGATE_FUZZ_SEED=${SEED} STREAMGATE_FUZZ_CASE=<index>)`);

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['ingress', 'management'], server: { port: 0, host: '127.0.0.1', maxBodyBytes: 2048 } });
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;
for (const name of ['fuzz', 'other']) {
  const res = await api.manage('PUT', api.tenantPath(`/queues/${name}`), {});
  if (res.status >= 300) throw new Error(`queue ${name}: ${res.status} ${JSON.stringify(res.body)}`);
}

// ---- the corpus: valid requests -------------------------------------------------
const event = (queue: string, body: string, extra = '') =>
  `POST /events/${tenant}/${queue} HTTP/1.1\r\nHost: sg.test\r\nX-Api-Key: ${creds.ingressKey}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${body.length}\r\n\r\n${body}`;
const chunkedEvent = (queue: string) =>
  `POST /events/${tenant}/${queue}?type=t HTTP/1.1\r\nHost: sg.test\r\nX-Api-Key: ${creds.ingressKey}\r\nX-Service-Group-Key: g1\r\nTransfer-Encoding: chunked\r\n\r\n` +
  `7;ext=1\r\n{"a":1,\r\n6 ; q="x;y"\r\n"b":2}\r\n0\r\nX-Trailer: yes\r\n\r\n`;
const health = 'GET /healthz HTTP/1.1\r\nHost: sg.test\r\n\r\n';
const manage = `GET /v1/tenants/${tenant}/queues/fuzz HTTP/1.1\r\nHost: sg.test\r\nX-Api-Key: ${creds.buildKey}\r\nX-License-PublicId: ${creds.licensePublicId}\r\nAccept: application/json\r\n\r\n`;
const CORPUS: readonly string[] = [
  health,
  event('fuzz', '{"n":1}'),
  event('fuzz', '{"order":"o-1","total":12.5}', 'X-Service-Event-Type: order.created\r\nX-Service-Partition-Key: p-7\r\n'),
  chunkedEvent('fuzz'),
  health + event('fuzz', '{"pair":1}'),
  event('other', '{"pair":2}') + chunkedEvent('fuzz'),
  manage,
  manage + health,
  'GET /healthz HTTP/1.0\r\n\r\n',
  'OPTIONS * HTTP/1.1\r\nHost: sg.test\r\n\r\n',
  event('fuzz', '{"expect":1}', 'Expect: 100-continue\r\n'),
  `GET http://sg.test:8080/readyz HTTP/1.1\r\nHost: sg.test\r\n\r\n`,
];

// ---- mutations ----------------------------------------------------------------------
/** mulberry32: a small, fast, seedable generator. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
type Rng = () => number;
const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pickOf = <T>(rng: Rng, list: readonly T[]): T => list[int(rng, list.length)]!;

const SPECIALS = ['\r', '\n', '\r\n', ' ', '\t', '\0', ':', ';', ',', '0', '1', '5', '9', 'f', '\r\n\r\n', '\r\n ', '"', '\x0b', '\x0c', '\x7f', '\x80', '\xff', '=', '/'];
const DUPLICABLE = new Set(['\r', '\n', ' ', '\t', '\0', ':', ';', ',', ...'0123456789']);
const INJECTIONS = [
  'Transfer-Encoding: chunked', 'Transfer-Encoding: Chunked', 'Transfer-Encoding: identity', 'Transfer-Encoding: chunked, chunked', 'Transfer-Encoding : chunked',
  'Transfer-Encoding: xchunked', 'Transfer-Encoding:\tchunked', 'Transfer-Encoding: gzip, chunked', 'Transfer-Encoding: \x0bchunked', 'Transfer_Encoding: chunked',
  'Content-Length: 0', 'Content-Length: 5', 'Content-Length: 99999', 'Content-Length: -1', 'Content-Length: 1,1', 'Content-Length: +3', 'Content-Length: 0x10',
  'Host: sg.test', 'Host: a b', 'Expect: 100-continue', 'Connection: close', 'Connection: keep-alive, Upgrade', 'Upgrade: websocket', 'X: X\nTransfer-Encoding: chunked',
];
const V2 = proxyV2('203.0.113.7').toString('latin1');
const PROXIES = [V2, proxyV1('203.0.113.7'), proxyV2Local().toString('latin1'), 'PROXY UNKNOWN\r\n', '\r\n\r\n\0\r\nQUIT\n'];

/** Offsets just after each LF (line starts), and 0. */
function lineStarts(s: string): number[] {
  const out = [0];
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}
const at = (s: string, i: number, insert: string, remove = 0) => s.slice(0, i) + insert + s.slice(i + remove);

const MUTATIONS: ReadonlyArray<(s: string, rng: Rng) => string> = [
  // byte flip
  (s, rng) => {
    if (!s) return s;
    const i = int(rng, s.length);
    return at(s, i, String.fromCharCode(s.charCodeAt(i) ^ (1 << int(rng, 8))), 1);
  },
  // insert a special byte or sequence
  (s, rng) => at(s, int(rng, s.length + 1), pickOf(rng, SPECIALS)),
  // delete 1-4 bytes
  (s, rng) => at(s, int(rng, s.length + 1), '', 1 + int(rng, 4)),
  // duplicate a CR, LF, SP, HTAB, NUL, `:`, `;`, `,` or digit
  (s, rng) => {
    const spots = [...s].map((c, i) => (DUPLICABLE.has(c) ? i : -1)).filter((i) => i >= 0);
    if (spots.length === 0) return s;
    const i = pickOf(rng, spots);
    return at(s, i, s[i]!.repeat(1 + int(rng, 2)));
  },
  // duplicate a header line (next to itself or elsewhere)
  (s, rng) => {
    const starts = lineStarts(s);
    if (starts.length < 3) return s;
    const k = 1 + int(rng, starts.length - 2);
    const line = s.slice(starts[k]!, starts[k + 1]!);
    return at(s, pickOf(rng, starts.slice(1)), line);
  },
  // case changes over a span
  (s, rng) => {
    const i = int(rng, s.length + 1);
    const n = 1 + int(rng, 12);
    const span = [...s.slice(i, i + n)].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
    return at(s, i, span, n);
  },
  // TE / CL (and other framing) injection at a line start
  (s, rng) => at(s, pickOf(rng, lineStarts(s).slice(1)), `${pickOf(rng, INJECTIONS)}\r\n`),
  // truncation
  (s, rng) => s.slice(0, int(rng, s.length + 1)),
  // a PROXY signature at the start or at a line start
  (s, rng) => at(s, rng() < 0.4 ? 0 : pickOf(rng, lineStarts(s)), pickOf(rng, PROXIES)),
  // a number replaced (Content-Length, chunk sizes, versions...)
  (s, rng) => {
    const numbers = [...s.matchAll(/[0-9a-fA-F]+/g)];
    if (numbers.length === 0) return s;
    const m = pickOf(rng, numbers);
    const value = Number.parseInt(m[0], 10) || 0;
    const replacement = pickOf(rng, ['0', String(value + 1), String(Math.max(0, value - 1)), '99999999999999999999', 'ffffffffffffffff', `0${m[0]}`, `${m[0]} ${m[0]}`, '2049', '']);
    return at(s, m.index, replacement, m[0].length);
  },
  // pipelining: another corpus request behind
  (s, rng) => s + pickOf(rng, CORPUS),
  // a line ending turned into a bare LF or a bare CR
  (s, rng) => {
    const ends = [...s.matchAll(/\r\n/g)].map((m) => m.index);
    if (ends.length === 0) return s;
    return at(s, pickOf(rng, ends), rng() < 0.7 ? '\n' : '\r', 2);
  },
];

interface FuzzCase {
  bytes: string;
  /** Where the writes are split (offsets into bytes). */
  cuts: number[];
}

function makeCase(index: number): FuzzCase {
  const rng = generator((Math.imul(SEED >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
  let bytes = pickOf(rng, CORPUS);
  const n = 1 + int(rng, 4);
  for (let k = 0; k < n; k++) bytes = pickOf(rng, MUTATIONS)(bytes, rng);
  const cuts: number[] = [];
  if (bytes.length > 1 && rng() < 0.3) {
    for (let k = 1 + int(rng, 3); k > 0; k--) cuts.push(1 + int(rng, bytes.length - 1));
  }
  return { bytes, cuts: [...new Set(cuts)].sort((a, b) => a - b) };
}

function pieces(c: FuzzCase): string[] {
  const out: string[] = [];
  let from = 0;
  for (const cut of [...c.cuts, c.bytes.length]) {
    out.push(c.bytes.slice(from, cut));
    from = cut;
  }
  return out.filter((p) => p.length > 0);
}

// ---- the run ------------------------------------------------------------------------
const histogram = new Map<string, number>();
const count = (key: string) => histogram.set(key, (histogram.get(key) ?? 0) + 1);
let accepted = 0;
let failures = 0;
const reported: string[] = [];

/** What is wrong with the answer to one case, or null. */
function problemsOf(c: FuzzCase, conv: Conversation): string | null {
  const problems: string[] = [];
  const finals = conv.responses.filter((r) => r.status >= 200);
  const mayHaveHead = /(^|\n)HEAD /i.test(c.bytes);
  if (conv.timedOut) problems.push('the server neither answered everything nor closed');
  else if (conv.ending === 'reset') problems.push('connection reset (expected FIN)');
  if (finals.length === 0 && !/^(\r\n)*$/.test(c.bytes)) problems.push('no answer');
  if (conv.parsed.error && !mayHaveHead) problems.push(`malformed answer: ${conv.parsed.error}`);
  for (const r of conv.responses) {
    if (r.status >= 500 && !allowedServerError(r)) problems.push(`${r.status} ${r.code ?? ''}`);
    if (r.status >= 400 && !mayHaveHead && (r.code === null || r.message === null)) problems.push(`${r.status} without the error envelope`);
  }
  return problems.length > 0 ? problems.join('; ') : null;
}

t.test(`${ONLY === null ? RUNS : 1} mutated requests: every one answered, no 5xx, well-formed, then FIN`, async (t) => {
  const before = await countRecords(backends);
  const indices = ONLY === null ? Array.from({ length: RUNS }, (_, i) => i) : [ONLY];
  const started = Date.now();
  await pool(indices, CONCURRENCY, async (index) => {
    const c = makeCase(index);
    const steps = pieces(c);
    const conv = await converse(node.port, steps, { gapMs: 1, timeoutMs: 10_000 });
    for (const r of conv.responses) {
      if (r.status === 202 && /^\{"eventId":"evt_[A-Za-z0-9_-]+"\}$/.test(r.body.toString('latin1'))) accepted++;
      count(describe(r));
    }
    if (conv.responses.length === 0) count(/^(\r\n)*$/.test(c.bytes) ? 'no answer (empty input)' : 'NO ANSWER');
    const problem = problemsOf(c, conv);
    if (ONLY !== null) t.comment(transcript(steps, conv));
    if (problem) {
      failures++;
      count('FAILED');
      if (reported.length < 20) reported.push(`seed ${SEED} case ${index}: ${problem}\nreplay: STREAMGATE_FUZZ_SEED=${SEED} STREAMGATE_FUZZ_CASE=${index}\n${transcript(steps, conv)}`);
    }
  });
  const seconds = (Date.now() - started) / 1000;
  t.comment(`${indices.length} cases in ${seconds.toFixed(1)} s (${Math.round(indices.length / seconds)}/s), seed ${SEED}`);
  t.comment(`answers: ${[...histogram].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  for (const r of reported) t.fail(r);
  t.equal(failures, 0, `every case answered by the rules (seed ${SEED})`);
  t.equal(histogram.get('NO ANSWER') ?? 0, 0, 'no input went unanswered');
  const health = await converse(node.port, ['GET /healthz HTTP/1.1\r\nHost: sg.test\r\n\r\n']);
  t.same(health.responses.map(describe), ['200'], 'the front still answers');
  t.equal(await countRecords(backends), before + accepted, `the log holds exactly the ${accepted} events answered 202 (seed ${SEED})`);
});
