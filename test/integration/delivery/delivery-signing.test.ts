import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import Stripe from 'stripe';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';
import { appendRecords, makeRecord, putQueueSettings, putTargetSettings, testDatabase } from '../../helpers/delivery.js';
import { verifyServiceSignature } from '../../../src/index.js';

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);

// ---- an independent reading of docs/api.md#authentication, written from the text, not from src/ ----

/** RFC 3986 encoding: encodeURIComponent also leaves !'()* alone, which RFC 3986 reserves. */
function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function contractQuery(query: string): string {
  if (!query) return '';
  const pairs = query
    .split('&')
    .filter(Boolean)
    .map((p) => {
      const [name, ...rest] = p.split('=');
      return [rfc3986(decodeURIComponent(name!)), rfc3986(decodeURIComponent(rest.join('=')))] as const;
    });
  pairs.sort((x, y) => (x[0] === y[0] ? (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) : x[0] < y[0] ? -1 : 1));
  return pairs.map(([n, v]) => `${n}=${v}`).join('&');
}

function contractSignatures(req: Received, secret: string): { v1: string; v2: string } {
  const [path, query = ''] = req.path.split('?');
  const h = (n: string) => String(req.headers[n] ?? '');
  const lines = ['POST', path!, contractQuery(query), h('x-service-timestamp'), h('x-service-nonce'), createHash('sha256').update(req.body).digest('hex')];
  const mac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');
  return { v1: mac(lines.join('\n')), v2: mac([...lines, h('x-service-event-id'), h('idempotency-key')].join('\n')) };
}

async function addSigningKey(keyId: string, secret: string): Promise<void> {
  const [ws] = await sql<{ id: string }[]>`SELECT id FROM workspaces WHERE public_id = ${creds.tenantPublicId}`;
  await sql`INSERT INTO signing_keys (key_id, workspace_id, secret) VALUES (${keyId}, ${ws!.id}, ${secret})`;
}

/** Fails the first attempt of every event, answers 200 afterwards: each event is signed twice. */
function failFirstAttempt(receiver: { responder: (req: Received, res: http.ServerResponse) => void }): void {
  const seen = new Set<string>();
  receiver.responder = (req, res) => {
    const id = String(req.headers['x-service-event-id']);
    if (seen.has(id)) return void res.end('ok');
    seen.add(id);
    res.statusCode = 503;
    res.end('not yet');
  };
}

await addSigningKey('sig_older_key_0000000001', 'whsec_older-secret');
await new Promise((r) => setTimeout(r, 20));
await addSigningKey('sig_newest_key_000000002', 'whsec_newest-secret');

t.test('hmac queues: v1 and v2 signatures match an independent implementation of docs/api.md#authentication, made afresh per attempt', async (t) => {
  const receiver = await startReceiver(t);
  // Percent-encoded path, repeated and unsorted parameters, "+", "~" and a parameter without "=".
  const url = `${receiver.url}/hooks/caf%C3%A9?z=1&a=2&a=1&sp=x%2By&plus=a+b&tilde=~x&empty`;
  await api.wire('signed', 'signed-target', url);
  await putQueueSettings(sql, backends, creds.tenantPublicId, 'signed', { outboundSigning: 'hmac' });
  failFirstAttempt(receiver);

  const withKey = await api.postEvent('signed', '{"order":1}', { 'idempotency-key': 'idem-7' });
  const withoutKey = await api.postEvent('signed', '{"order":2}');
  t.equal(withKey.status, 202);
  await receiver.waitFor((r) => r.length >= 4, 30_000, 'two attempts of each event');

  for (const req of receiver.requests) {
    const id = req.headers['x-service-event-id'];
    t.equal(req.path, '/hooks/caf%C3%A9?z=1&a=2&a=1&sp=x%2By&plus=a+b&tilde=~x&empty', 'path and query as configured');
    t.equal(req.headers['x-service-key-id'], 'sig_newest_key_000000002', `${id}: the newest key signs`);
    t.match(req.headers['x-service-timestamp'], /^\d{10}$/);
    t.ok(Math.abs(Number(req.headers['x-service-timestamp']) - Date.now() / 1000) < 60, 'timestamp is now');
    t.equal(req.headers['x-service-content-sha256'], createHash('sha256').update(req.body).digest('hex'));
    const expected = contractSignatures(req, 'whsec_newest-secret');
    t.equal(req.headers['x-service-signature'], expected.v1, `${id}: v1 matches`);
    t.equal(req.headers['x-service-signatures'], `v2=${expected.v2}`, `${id}: v2 matches`);
    t.notOk(req.headers['payments-signature'], 'no payments signature on an hmac queue');

    // The receiver verifier (streamgate/verify, src/verify/) agrees, and refuses tampering.
    const check = (over: Partial<Parameters<typeof verifyServiceSignature>[0]> = {}) =>
      verifyServiceSignature({ url: req.path, headers: req.headers, body: req.body, secret: ['whsec_older-secret', 'whsec_newest-secret'], ...over });
    t.match(await check(), { ok: true, version: 'v2', keyId: 'sig_newest_key_000000002' });
    t.match(await check({ version: 'v1' }), { ok: true, version: 'v1' });
    t.match(await check({ body: Buffer.concat([req.body, Buffer.from(' ')]) }), { ok: false });
    t.match(await check({ url: req.path.replace('z=1', 'z=2') }), { ok: false });
    t.match(await check({ headers: { ...req.headers, 'idempotency-key': 'other' } }), { ok: false }, 'v2 binds the Idempotency-Key');
    t.match(await check({ secret: 'whsec_older-secret' }), { ok: false }, 'a rotated-out key does not verify');
    t.match(await check({ now: Date.now() + 600_000 }), { ok: false, reason: 'timestamp_too_old' });
  }
  for (const id of [withKey.body.eventId, withoutKey.body.eventId]) {
    const attempts = receiver.requests.filter((r) => r.headers['x-service-event-id'] === id);
    t.equal(attempts.length, 2, 'failed once, then delivered');
    t.not(attempts[0]!.headers['x-service-nonce'], attempts[1]!.headers['x-service-nonce'], 'a new nonce per attempt');
    t.not(attempts[0]!.headers['x-service-signature'], attempts[1]!.headers['x-service-signature'], 'signed anew per attempt');
  }
  const noIdem = receiver.requests.find((r) => r.headers['x-service-event-id'] === withoutKey.body.eventId)!;
  t.notOk(noIdem.headers['idempotency-key'], 'no Idempotency-Key when the event has none (v2 signs an empty line)');
});

t.test('Payments-Signature: recalculated on every attempt, only for events verified at a payments ingress, and stripe accepts it', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('payments', 'payments-target', `${receiver.url}/stripe`);
  const secret = 'whsec_payments_test_secret';
  const queue = await putQueueSettings(sql, backends, creds.tenantPublicId, 'payments', {
    authMode: 'payments',
    paymentsSecret: secret,
    paymentsSignatureRecalculation: true,
    outboundSigning: 'hmac',
  });
  failFirstAttempt(receiver);
  const body = Buffer.from('{"id":"evt_1","object":"event","type":"charge.succeeded","data":{"object":{"amount":999}}}');
  const recalculated = makeRecord(queue, { body, paymentsRecalc: true, partitionKey: 'cus_1' });
  const plain = makeRecord(queue, { body, partitionKey: 'cus_1' });
  await appendRecords(t, backends, [recalculated, plain]);
  await receiver.waitFor((r) => r.length >= 4, 30_000, 'two attempts of each event');

  const stripe = new Stripe('sk_test_unused');
  const recalcAttempts = receiver.requests.filter((r) => r.headers['x-service-event-id'] === recalculated.id);
  t.equal(recalcAttempts.length, 2);
  for (const req of recalcAttempts) {
    const header = String(req.headers['payments-signature']);
    t.match(header, /^t=\d{10},v1=[0-9a-f]{64}$/);
    const event = stripe.webhooks.constructEvent(req.body, header, secret);
    t.equal(event.id, 'evt_1', 'stripe.webhooks.constructEvent accepts the delivery');
    t.throws(() => stripe.webhooks.constructEvent(req.body, header, 'whsec_other'), 'and refuses another secret');
    t.notOk(req.headers['x-service-signature'], 'Payments-Signature is sent instead of the service signature');
    t.same(req.body, body, 'over unchanged bytes');
  }
  t.ok(
    Number(/t=(\d+)/.exec(String(recalcAttempts[1]!.headers['payments-signature']))![1]) >= Number(/t=(\d+)/.exec(String(recalcAttempts[0]!.headers['payments-signature']))![1]),
    'the retry carries its own timestamp',
  );
  const plainReq = receiver.requests.find((r) => r.headers['x-service-event-id'] === plain.id)!;
  t.notOk(plainReq.headers['payments-signature'], 'an event not verified with recalculation on is not re-signed');
  t.ok(plainReq.headers['x-service-signature'], 'it gets the queue\'s own signature');
});

t.test('headers: mapped (identical on every retry), group key, static, Idempotency-Key, X-Service-Path; precedence of docs/api.md#ingress', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('headers', 'headers-target', `${receiver.url}/h`, {}, { staticHeaders: { 'X-Static': 'fixed' }, groupKeyHeader: 'X-Group' });
  const queue = await putQueueSettings(sql, backends, creds.tenantPublicId, 'headers', {});
  failFirstAttempt(receiver);
  const record = makeRecord(queue, {
    mappedHeaders: [['X-Tier', 'gold'], ['X-Region', 'eu-west']],
    groupKey: 'grp-1',
    partitionKey: 'p-1',
    idempotencyKey: 'idem-h',
    eventType: 'order.created',
    path: 'sg:ten_upstream/orders',
  });
  await appendRecords(t, backends, [record]);
  await receiver.waitFor((r) => r.length >= 2, 30_000, 'two attempts');
  for (const req of receiver.requests) {
    t.equal(req.headers['x-tier'], 'gold');
    t.equal(req.headers['x-region'], 'eu-west');
    t.equal(req.headers['x-group'], 'grp-1', 'group key under the configured name');
    t.equal(req.headers['x-static'], 'fixed');
    t.equal(req.headers['idempotency-key'], 'idem-h');
    t.equal(req.headers['x-service-event-id'], record.id);
    t.equal(req.headers['x-service-event-type'], 'order.created');
    t.equal(req.headers['x-service-path'], `sg:ten_upstream/orders,sg:${creds.tenantPublicId}/headers`, 'own segment appended');
  }

  // Configuration saved before the rules existed: the precedence still decides.
  const stale = await startReceiver(t);
  await api.wire('stale', 'stale-target', `${stale.url}/s`);
  await putTargetSettings(sql, backends, creds.tenantPublicId, 'stale-target', `${stale.url}/s`, { staticHeaders: { 'X-Tier': 'static-wins' } });
  const staleQueue = await putQueueSettings(sql, backends, creds.tenantPublicId, 'stale', {});
  const collide = makeRecord(staleQueue, {
    mappedHeaders: [['X-Tier', 'mapped-loses'], ['X-Service-Event-Id', 'forged'], ['Authorization', 'Bearer forged'], ['X-Kept', 'yes']],
  });
  await appendRecords(t, backends, [collide]);
  await stale.waitFor((r) => r.length >= 1, 30_000, 'the delivery');
  const got = stale.requests[0]!;
  t.equal(got.headers['x-tier'], 'static-wins', 'static beats mapped');
  t.equal(got.headers['x-service-event-id'], collide.id, 'the service\'s own header beats mapped');
  t.notOk(got.headers.authorization, 'a never-forwardable name is not forwarded');
  t.equal(got.headers['x-kept'], 'yes');
});

t.test('target auth: Bearer and Basic', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('auth-bearer', 'bearer-target', `${receiver.url}/b`, {}, { auth: { mode: 'bearer', token: 'tok-123' } });
  await api.wire('auth-basic', 'basic-target', `${receiver.url}/c`, {}, { auth: { mode: 'basic', username: 'user', password: 'p:ss' } });
  await api.postEvent('auth-bearer', '{}');
  await api.postEvent('auth-basic', '{}');
  await receiver.waitFor((r) => r.length >= 2, 30_000, 'both deliveries');
  t.equal(receiver.requests.find((r) => r.path === '/b')!.headers.authorization, 'Bearer tok-123');
  t.equal(receiver.requests.find((r) => r.path === '/c')!.headers.authorization, `Basic ${Buffer.from('user:p:ss').toString('base64')}`);
  const shown = await api.manage('GET', api.tenantPath('/targets/basic-target'));
  t.same(shown.body.auth, { mode: 'basic', username: 'user' }, 'the password is never shown');
});

t.test('OAuth 2.0 client credentials: token fetched once and cached, refreshed once on a 401, fetched again before it expires', async (t) => {
  // A token endpoint: each token is "tok-N"; tokens live `lifetime` seconds.
  let issued = 0;
  let lifetime = 3600;
  const tokenRequests: Array<{ authorization: string; body: string }> = [];
  const tokenServer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      tokenRequests.push({ authorization: String(req.headers.authorization), body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: `tok-${++issued}`, token_type: 'Bearer', expires_in: lifetime }));
    });
  });
  await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => tokenServer.close(() => r())));
  const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/oauth/token`;

  const receiver = await startReceiver(t);
  let accepted = new Set(['tok-1']);
  receiver.responder = (req, res) => {
    res.statusCode = accepted.has(String(req.headers.authorization).replace('Bearer ', '')) ? 200 : 401;
    res.end();
  };
  await api.wire('oauth', 'oauth-target', `${receiver.url}/o`, {}, {
    auth: { mode: 'oauth2', tokenUrl, clientId: 'client id', clientSecret: 's3cret&', scope: 'events:write' },
  });
  for (let i = 0; i < 3; i++) await api.postEvent('oauth', `{"n":${i}}`, { 'x-service-partition-key': 'one-lane' });
  await receiver.waitFor((r) => r.length >= 3, 30_000, 'three deliveries');
  t.equal(tokenRequests.length, 1, 'one token request for three deliveries');
  t.equal(tokenRequests[0]!.authorization, `Basic ${Buffer.from('client%20id:s3cret%26').toString('base64')}`, 'client_secret_basic');
  t.same(Object.fromEntries(new URLSearchParams(tokenRequests[0]!.body)), { grant_type: 'client_credentials', scope: 'events:write' });
  t.ok(receiver.requests.every((r) => r.headers.authorization === 'Bearer tok-1'));

  // The receiver revokes tok-1: the next delivery gets a 401, refreshes once and resends.
  accepted = new Set(['tok-2']);
  const before = receiver.requests.length;
  await api.postEvent('oauth', '{"n":"after-revoke"}');
  await receiver.waitFor((r) => r.some((x) => x.headers.authorization === 'Bearer tok-2'), 30_000, 'the resend with a new token');
  const latest = receiver.requests.slice(before);
  t.same(latest.map((r) => r.headers.authorization), ['Bearer tok-1', 'Bearer tok-2'], 'one 401, one refresh, one resend');
  t.equal(tokenRequests.length, 2);

  // Short-lived tokens are refreshed before they expire, not after a failure.
  lifetime = 2;
  accepted = new Set(['tok-3', 'tok-4']);
  await api.manage('PUT', api.tenantPath('/targets/oauth-target'), {
    url: `${receiver.url}/o`,
    auth: { mode: 'oauth2', tokenUrl, clientId: 'client id', clientSecret: 'rotated', scope: 'events:write' },
  });
  await new Promise((r) => setTimeout(r, 300)); // the route cache hears of the change
  await api.postEvent('oauth', '{"n":"short-1"}');
  await receiver.waitFor((r) => r.some((x) => x.headers.authorization === 'Bearer tok-3'), 30_000, 'a delivery with tok-3');
  await new Promise((r) => setTimeout(r, 1_500)); // past lifetime minus margin (min(30 s, lifetime / 2) = 1 s)
  await api.postEvent('oauth', '{"n":"short-2"}');
  await receiver.waitFor((r) => r.some((x) => x.headers.authorization === 'Bearer tok-4'), 30_000, 'a delivery with tok-4');
  const shortLived = receiver.requests.filter((r) => /short/.test(r.body.toString()));
  t.same(shortLived.map((r) => r.headers.authorization), ['Bearer tok-3', 'Bearer tok-4'], 'no attempt was refused: the token was renewed ahead of expiry');
  t.equal(tokenRequests.length, 4);
});
