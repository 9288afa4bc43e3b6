import t from 'tap';
import fc from 'fast-check';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { countRecords } from '../../helpers/topic.js';
import { rawPost, rawRequest } from '../../helpers/raw-http.js';
import { signRequest } from '../../helpers/signing.js';

/**
 * Property-based: random headers, paths, query strings and bodies, sent as raw
 * bytes (so also what fetch refuses to send). Whatever arrives, ingress
 * answers with a 2xx or a 4xx in the error envelope (never a 5xx), the process
 * keeps serving, and exactly the 202 answers are records in the topic.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['ingress', 'management'], server: { port: 0, host: '127.0.0.1', maxBodyBytes: 2048 } });
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;

const QUEUES: Record<string, object> = {
  plain: {},
  rich: {
    groupKey: { source: 'body', name: 'g' },
    eventType: { source: 'query', name: 'type' },
    mappedHeaders: [{ from: { source: 'body', name: 'm' }, as: 'X-M', required: false }, { from: { source: 'header', name: 'X-H' }, as: 'X-H2', required: false }],
    hopBudget: 3,
  },
  signed: { authMode: 'signed_request' },
  payments: { authMode: 'payments', paymentsSecret: 'whsec_fuzz', paymentsSignatureRecalculation: true },
};
for (const [name, settings] of Object.entries(QUEUES)) {
  const res = await api.manage('PUT', api.tenantPath(`/queues/${name}`), settings);
  if (res.status >= 300) throw new Error(`${name}: ${JSON.stringify(res.body)}`);
}
const sk = await api.manage('POST', api.tenantPath('/signing-keys'));
const signingKey = { keyId: sk.body.keyId as string, secret: sk.body.secret as string };

// ---- arbitraries ------------------------------------------------------------
const pick = <T>(...values: T[]) => fc.constantFrom(...values);
/** Visible ASCII, escapes (valid and broken) and multi-byte characters: what can sit in a request target. */
const targetChar = fc.oneof(
  fc.string({ unit: pick(...'abcXYZ019-._~!$&\'()*+,;=:@/?%'.split('')), minLength: 1, maxLength: 1 }),
  pick('%2F', '%00', '%ff', '%e2%82%ac', '%', '%zz', '%%', 'é', '東', '..', '//', 'sb_fail_code=1', 'runId=x', 'type=t'),
);
const targetText = fc.array(targetChar, { maxLength: 12 }).map((parts) => parts.join(''));
const path = fc.oneof(
  { weight: 12, arbitrary: fc.tuple(pick(...Object.keys(QUEUES)), pick('', '', '', '', '', '', '/', '/x')).map(([q, tail]) => `/events/${tenant}/${q}${tail}`) },
  { weight: 1, arbitrary: pick('/events/sandbox/', `/events/${tenant}/`, '/events/', `/events/sandbox/${tenant}/plain`) },
  { weight: 2, arbitrary: targetText.map((s) => `/events/${s}`) },
  { weight: 1, arbitrary: fc.tuple(targetText, targetText).map(([a, b]) => `/events/${tenant}${a}/${b}`) },
);
const query = fc.option(targetText.map((s) => s.replace(/#/g, '')), { nil: '' });

/** Header values: printable text, tabs, non-ASCII, the C1 range, and bytes that are not UTF-8. */
const headerValue: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: pick('a', 'Z', ' ', '\t', ',', '=', 'é', '\u0085', '東', '🚀', '\uFFFD'), maxLength: 20 }),
  pick(creds.ingressKey, `${creds.ingressKey}x`, 'qak_key_aaaaaaaaaa.bbbbbbbbbbbbbbbbbbbb', `sg:${tenant}/plain`, 'a,b,c,d', 'k'.repeat(300), 't=1,v1=00'),
  // Any bytes at all but LF (which ends the line): controls, CR, NUL, bytes that are not UTF-8. The header guard
  // passes them on re-encoded, so they reach the ordinary checks.
  fc.uint8Array({ minLength: 1, maxLength: 12 }).map((bytes) => Buffer.from(bytes.map((b) => (b === 0x0a ? 0x0b : b)))),
);
const headerName = fc.oneof(
  pick('x-api-key', 'x-service-event-type', 'x-service-group-key', 'x-service-partition-key', 'x-service-path', 'idempotency-key', 'content-type',
    'x-service-key-id', 'x-service-timestamp', 'x-service-nonce', 'x-service-content-sha256', 'x-service-signature', 'payments-signature', 'x-h', 'authorization'),
  fc.stringMatching(/^x-[a-z0-9-]{1,12}$/),
);
const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 });
const body = fc.oneof(
  fc.json().map((j) => Buffer.from(j)),
  fc.record({ g: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.object()), m: fc.oneof(fc.string(), fc.boolean()) }).map((o) => Buffer.from(JSON.stringify(o))),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.integer({ min: 2000, max: 3000 }).map((n) => Buffer.alloc(n, 'x')),
);

let accepted = 0;
const seen = new Map<string, number>();
async function exercise(target: string, hs: Array<[string, string | Buffer]>, payload: Buffer, withKey: boolean): Promise<void> {
  const all: Array<[string, string | Buffer]> = withKey && !hs.some(([n]) => n === 'x-api-key') ? [['x-api-key', creds.ingressKey], ...hs] : hs;
  const res = await rawRequest(node.port, rawPost(target, all, payload), 5_000);
  if (res.status === null) {
    // Every request gets an answer: the strict parser refuses what it cannot serve.
    throw new Error(`no answer to ${JSON.stringify(target)}`);
  }
  if (res.status >= 500) throw new Error(`${res.status} for ${JSON.stringify(target)}: ${res.body}`);
  const code = res.status === 202 ? '202' : `${res.status} ${(/"code":"(\w+)"/.exec(res.body) ?? [])[1]}`;
  seen.set(code, (seen.get(code) ?? 0) + 1);
  if (res.status === 202) {
    accepted++;
    if (!/^\{"eventId":"evt_[A-Za-z0-9_-]{24}"(,"replayed":true)?\}$/.test(res.body)) throw new Error(`odd 202 body ${res.body}`);
    if (res.body.includes('replayed')) accepted--;
  } else if (res.status >= 400) {
    const parsed = JSON.parse(res.body) as { error?: { code?: unknown; message?: unknown } };
    if (typeof parsed.error?.code !== 'string' || typeof parsed.error.message !== 'string') throw new Error(`no error envelope: ${res.body}`);
  }
}

t.test('random requests: never a 5xx, always an answer, only 202s are written', async (t) => {
  const before = await countRecords(backends);
  await fc.assert(
    fc.asyncProperty(path, query, headers, body, fc.boolean().chain((b) => (b ? fc.constant(true) : fc.boolean())), async (p, q, hs, b, withKey) => {
      await exercise(q ? `${p}?${q}` : p, hs, b, withKey);
    }),
    { numRuns: 400 },
  );
  // What the runs reached, so a reader can see the property got past the first checks.
  t.comment([...seen].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ×${n}`).join(', '));
  // The reach check asks only for what every run gets many times over (each of
  // these kinds came 10+ times in 400 requests): the rarer refusals come 0–6
  // times, and requiring them made the test fail by chance (a CI run saw 8 kinds).
  t.ok(accepted > 0, 'some random requests were accepted');
  const common = ['404 not_found', '401 invalid_signature', '413 payload_too_large', '400 invalid_header', '401 missing_api_key'];
  t.same(common.filter((kind) => !seen.has(kind)), [], 'the random requests reached the refusals of every stage');
  t.equal((await api.request('GET', '/healthz')).status, 200, 'still serving');
  t.equal(await countRecords(backends), before + accepted, `the ${accepted} accepted events and nothing else are in the topic`);
});

t.test('correctly signed requests with random queries and bodies verify (server and contract agree on QUERY)', async (t) => {
  // Raw bytes >= 0x80 in a request target are refused (400 bad_request, RFC 9112 §3.2): clients percent-encode them.
  const safeQuery = targetText.map((s) => s.replace(/#/g, '').replace(/sb_fail_code|runId/g, 'x').replace(/[^\x00-\x7f]/gu, (c) => encodeURIComponent(c)));
  await fc.assert(
    fc.asyncProperty(safeQuery, fc.uint8Array({ maxLength: 200 }), async (q, bytes) => {
      const target = `/events/${tenant}/signed${q ? `?${q}` : ''}`;
      const payload = Buffer.from(bytes);
      const signed = Object.entries(signRequest({ pathAndQuery: target, body: payload, key: signingKey }));
      const res = await rawRequest(node.port, rawPost(target, signed, payload), 5_000);
      if (res.status !== 202) throw new Error(`${res.status} ${res.body} for ${JSON.stringify(target)}`);
    }),
    { numRuns: 150 },
  );
  t.pass('every correctly signed request was accepted');
});

t.test('bytes an HTTP parser must refuse (CR, LF, NUL and other controls, obs-fold, bad request lines): always a 4xx answer, nothing written', async (t) => {
  const before = await countRecords(backends);
  const broken = fc.oneof(
    fc.tuple(headerName, pick('\r', '\n', '\0', '\u0001', '\u001b', '\u007f', '\r\n x', '\r\n\tfolded')).map(([name, bad]) => rawPost(`/events/${tenant}/plain`, [['x-api-key', creds.ingressKey], [name, `a${bad}b`]], Buffer.from('{}'))),
    pick(
      Buffer.from(`POST /events/${tenant}/plain HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ncontent-length: 7\r\nx-api-key: ${creds.ingressKey}\r\n\r\n12345`),
      Buffer.from(`POST /events/${tenant}/plain HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nx-api-key: ${creds.ingressKey}\r\n\r\nzz\r\n`),
      Buffer.from(`POST /events/${tenant}/plain HTTP/1.1\r\nhost: x\r\nx-api-key: ${creds.ingressKey}\r\ncontent-length: 2\r\n\r\n{}`.replace(/\r\n/g, '\n')),
      Buffer.from(`POST /events/${tenant}/pl ain HTTP/1.1\r\nhost: x\r\n\r\n`),
      Buffer.from('GARBAGE\r\n\r\n'),
      Buffer.from([0x50, 0x4f, 0x53, 0x54, 0x20, 0x2f, 0xff, 0x00, 0x0d, 0x0a, 0x0d, 0x0a]),
    ),
  );
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(broken, async (bytes) => {
      const res = await rawRequest(node.port, bytes, 3_000);
      if (res.status === null) throw new Error(`no answer to ${JSON.stringify(bytes.toString('latin1'))}`);
      if (res.status < 400 || res.status >= 500) throw new Error(`${res.status}: ${res.body}`);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }),
    { numRuns: 60 },
  );
  t.comment([...statuses].map(([s, n]) => `${s} ×${n}`).join(', '));
  t.equal((await api.request('GET', '/healthz')).status, 200, 'still serving');
  t.equal(await countRecords(backends), before, 'nothing written');
});

t.test('clients that vanish mid-body leave nothing waiting: the node drains at once', async (t) => {
  const net = await import('node:net');
  const before = await countRecords(backends);
  await Promise.all(Array.from({ length: 20 }, () => new Promise<void>((resolve) => {
    const socket = net.connect(node.port, '127.0.0.1', () => {
      socket.write(`POST /events/${tenant}/plain HTTP/1.1\r\nhost: x\r\nx-api-key: ${creds.ingressKey}\r\ncontent-length: 1000\r\n\r\n{"half":`);
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 100);
    });
  })));
  await new Promise((r) => setTimeout(r, 200));
  // Handlers still awaiting those bodies would hold the drain until its deadline (server.shutdownTimeoutMs).
  const started = Date.now();
  await node.stop();
  t.ok(Date.now() - started < 5_000, `stopped in ${Date.now() - started} ms`);
  t.equal(await countRecords(backends), before, 'nothing written');
});
