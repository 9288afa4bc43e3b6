import t, { type Test } from 'tap';
import { createHmac, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';
import { countRecords, readRecords } from '../../helpers/topic.js';

/**
 * Inbound sources (docs/api.md#ingress-auth-modes): `standard_webhooks`, `github` and
 * `shopify` queues take webhooks a provider signs over the raw body with the
 * queue's sourceSecret, without an API key. The requests here are signed by the
 * providers' own libraries (standardwebhooks, @octokit/webhooks-methods) and,
 * for Shopify, as its documentation computes the HMAC (base64 HMAC-SHA256 of
 * the raw body with node:crypto).
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;
const receiver = await startReceiver(t);

const STANDARD_SECRET = `whsec_${Buffer.from('streamgate inbound source key 32').toString('base64')}`;
const GITHUB_SECRET = 'It’s a Secret to Everybody';
const SHOPIFY_SECRET = 'shpss_streamgate_client_secret_0123';
const SECRETS = [STANDARD_SECRET, GITHUB_SECRET, SHOPIFY_SECRET];

await api.wire('std', 'std-target', `${receiver.url}/std`, { authMode: 'standard_webhooks', sourceSecret: STANDARD_SECRET });
await api.wire('gh', 'gh-target', `${receiver.url}/gh`, { authMode: 'github', sourceSecret: GITHUB_SECRET });
await api.wire('shop', 'shop-target', `${receiver.url}/shop`, { authMode: 'shopify', sourceSecret: SHOPIFY_SECRET });

/** A POST as the provider sends it: the raw body, its headers, no API key. */
const post = (queue: string, body: string | Buffer, headers: Record<string, string>) =>
  api.request('POST', `/events/${tenant}/${queue}`, { raw: body, headers: { 'content-type': 'application/json', ...headers } });

/** Whitespace, key order and non-ASCII text a re-serialiser would change: signatures are over these bytes. */
const bodyOf = (n: string) => `{ "id": "${n}",\n  "customer": "Zoë Ångström", "total": 12.50 }`;
const oneByteChanged = (body: string) => body.replace('12.50', '12.51');

function standardHeaders(body: string, id = `msg_${randomUUID()}`, at = new Date()): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(STANDARD_SECRET).sign(id, at, body),
  };
}
async function githubHeaders(body: string, event = 'push', delivery: string = randomUUID()): Promise<Record<string, string>> {
  return { 'x-hub-signature-256': await githubSign(GITHUB_SECRET, body), 'x-github-event': event, 'x-github-delivery': delivery };
}
function shopifyHeaders(body: string, topic = 'orders/create', id: string = randomUUID()): Record<string, string> {
  return {
    'x-shopify-hmac-sha256': createHmac('sha256', SHOPIFY_SECRET).update(Buffer.from(body, 'utf8')).digest('base64'),
    'x-shopify-topic': topic,
    'x-shopify-webhook-id': id,
    'x-shopify-shop-domain': 'streamgate-test.myshopify.com',
  };
}

const deliveredOf = (eventId: string) => receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId);
async function deliveredOnce(t: Test, eventId: string, path: string): Promise<Received> {
  await receiver.waitFor((rs) => rs.some((r) => r.headers['x-service-event-id'] === eventId), 30_000, `delivery of ${eventId}`);
  const got = deliveredOf(eventId)[0]!;
  t.equal(got.path, path, 'delivered to the routed target');
  return got;
}

t.test('the source secret is write-only: answers say only sourceSecretSet', async (t) => {
  for (const name of ['std', 'gh', 'shop']) {
    const got = await api.manage('GET', api.tenantPath(`/queues/${name}`));
    t.equal(got.status, 200);
    t.equal(got.body.sourceSecretSet, true, `${name}: sourceSecretSet`);
    t.equal(got.body.paymentsSecretSet, false);
    t.notOk('sourceSecret' in got.body, `${name}: no sourceSecret field`);
  }
  const put = await api.manage('PUT', api.tenantPath('/queues/std'), { authMode: 'standard_webhooks', sourceSecret: STANDARD_SECRET });
  t.equal(put.status, 200, 'an unchanged PUT');
  t.equal(put.body.authMode, 'standard_webhooks');
  const list = await api.manage('GET', api.tenantPath('/queues'));
  t.equal(list.status, 200);
  const text = JSON.stringify([put.body, list.body]);
  for (const secret of SECRETS) t.notOk(text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1)), 'no secret in any answer');
  const states = Object.fromEntries((list.body.items as Array<{ name: string; state: string }>).map((q) => [q.name, q.state]));
  t.same([states.std, states.gh, states.shop], ['accepting', 'accepting', 'accepting']);
});

t.test('standard_webhooks: signed by standardwebhooks, accepted without an API key, delivered byte for byte; a retry is a replay', async (t) => {
  const body = bodyOf('std-1');
  const headers = standardHeaders(body);
  const res = await post('std', body, headers);
  t.equal(res.status, 202, JSON.stringify(res.body));
  t.notOk(res.body.replayed);
  const got = await deliveredOnce(t, res.body.eventId, '/std');
  t.same(got.body, Buffer.from(body, 'utf8'), 'the body byte for byte');
  t.equal(got.headers['idempotency-key'], headers['webhook-id'], 'webhook-id is the idempotency key');

  // The provider retries the same message (same id, a fresh timestamp and signature).
  const retry = await post('std', body, standardHeaders(body, headers['webhook-id']));
  t.same(retry.body, { eventId: res.body.eventId, replayed: true });
  t.equal(retry.status, 202);
  // An explicit Idempotency-Key wins over webhook-id.
  const keyed = await post('std', body, { ...standardHeaders(body, headers['webhook-id']), 'idempotency-key': 'explicit-1' });
  t.equal(keyed.status, 202);
  t.not(keyed.body.eventId, res.body.eventId, 'another key, another event');
  await deliveredOnce(t, keyed.body.eventId, '/std');
  await sleep(1500);
  t.equal(deliveredOf(res.body.eventId).length, 1, 'the receiver got the event once');
  const stored = (await readRecords(backends)).filter((r) => r.idempotencyKey === headers['webhook-id']);
  t.equal(stored.length, 1, 'one record for the webhook-id');
});

t.test('standard_webhooks refusals: a byte changed, another secret, stale, future or missing timestamp, missing headers', async (t) => {
  const body = bodyOf('std-bad');
  const before = await countRecords(backends);
  const tenMinutes = 10 * 60 * 1000;
  const other = `whsec_${Buffer.from('a different key, also 32 bytes..').toString('base64')}`;
  const id = 'msg_refused';
  const now = new Date();
  const cases: Array<[string, string, Record<string, string>, string]> = [
    ['one byte changed', oneByteChanged(body), standardHeaders(body), 'invalid_signature'],
    ['another secret', body, { ...standardHeaders(body, id), 'webhook-signature': new Webhook(other).sign(id, now, body) }, 'invalid_signature'],
    ['another webhook-id than signed', body, { ...standardHeaders(body, id), 'webhook-id': 'msg_other' }, 'invalid_signature'],
    ['ten minutes old', body, standardHeaders(body, id, new Date(Date.now() - tenMinutes)), 'timestamp_out_of_range'],
    ['ten minutes ahead', body, standardHeaders(body, id, new Date(Date.now() + tenMinutes)), 'timestamp_out_of_range'],
    ['no webhook-timestamp', body, (({ 'webhook-timestamp': _, ...h }) => h)(standardHeaders(body, id)), 'timestamp_out_of_range'],
    ['no webhook-signature', body, (({ 'webhook-signature': _, ...h }) => h)(standardHeaders(body, id)), 'invalid_signature'],
    ['no webhook-id', body, (({ 'webhook-id': _, ...h }) => h)(standardHeaders(body, id)), 'invalid_signature'],
    ['only a v2 entry', body, { ...standardHeaders(body, id), 'webhook-signature': standardHeaders(body, id)['webhook-signature']!.replace('v1,', 'v2,') }, 'invalid_signature'],
    ['an API key is no substitute', body, { 'x-api-key': creds.ingressKey }, 'invalid_signature'],
  ];
  for (const [name, sent, headers, code] of cases) {
    const res = await post('std', sent, headers);
    t.equal(res.status, 401, `${name}: 401`);
    t.equal(res.body.error?.code, code, `${name}: ${code}`);
    t.type(res.body.error?.message, 'string', `${name}: the error envelope`);
  }
  t.equal(await countRecords(backends), before, 'nothing written');
});

t.test('github: signed by @octokit/webhooks-methods; X-GitHub-Event is the type, X-GitHub-Delivery the idempotency key', async (t) => {
  const body = bodyOf('gh-1');
  const headers = await githubHeaders(body, 'pull_request');
  const res = await post('gh', body, headers);
  t.equal(res.status, 202, JSON.stringify(res.body));
  const got = await deliveredOnce(t, res.body.eventId, '/gh');
  t.same(got.body, Buffer.from(body, 'utf8'), 'the body byte for byte');
  t.equal(got.headers['x-service-event-type'], 'pull_request', 'the event type from X-GitHub-Event');
  t.equal(got.headers['idempotency-key'], headers['x-github-delivery']);

  const redelivered = await post('gh', body, await githubHeaders(body, 'pull_request', headers['x-github-delivery']));
  t.equal(redelivered.status, 202);
  t.same(redelivered.body, { eventId: res.body.eventId, replayed: true }, 'a redelivery from GitHub is a replay');

  const before = await countRecords(backends);
  const tampered = await post('gh', oneByteChanged(body), await githubHeaders(body));
  t.equal(tampered.status, 401);
  t.equal(tampered.body.error.code, 'invalid_signature');
  const unsigned = await post('gh', body, { 'x-github-event': 'push', 'x-github-delivery': randomUUID() });
  t.equal(unsigned.status, 401);
  t.equal(unsigned.body.error.code, 'invalid_signature');
  const sha1 = await post('gh', body, { 'x-hub-signature': 'sha1=' + createHmac('sha1', GITHUB_SECRET).update(body).digest('hex'), 'x-github-delivery': randomUUID() });
  t.equal(sha1.body.error.code, 'invalid_signature', 'the legacy SHA-1 header is not enough');
  t.equal(await countRecords(backends), before, 'nothing written');
  await sleep(1500);
  t.equal(deliveredOf(res.body.eventId).length, 1, 'the receiver got the event once');
});

t.test('shopify: base64 HMAC of the raw body; X-Shopify-Topic is the type, X-Shopify-Webhook-Id the idempotency key', async (t) => {
  const body = bodyOf('shop-1');
  const headers = shopifyHeaders(body);
  const res = await post('shop', body, headers);
  t.equal(res.status, 202, JSON.stringify(res.body));
  const got = await deliveredOnce(t, res.body.eventId, '/shop');
  t.same(got.body, Buffer.from(body, 'utf8'), 'the body byte for byte');
  t.equal(got.headers['x-service-event-type'], 'orders/create', 'the event type from X-Shopify-Topic');
  t.equal(got.headers['idempotency-key'], headers['x-shopify-webhook-id']);

  const again = await post('shop', body, headers);
  t.equal(again.status, 202);
  t.same(again.body, { eventId: res.body.eventId, replayed: true }, 'a retry from Shopify is a replay');

  const before = await countRecords(backends);
  for (const [name, sent, h] of [
    ['one byte changed', oneByteChanged(body), shopifyHeaders(body)],
    ['hex instead of base64', body, { ...shopifyHeaders(body), 'x-shopify-hmac-sha256': createHmac('sha256', SHOPIFY_SECRET).update(body).digest('hex') }],
    ['another secret', body, { ...shopifyHeaders(body), 'x-shopify-hmac-sha256': createHmac('sha256', 'shpss_other').update(body).digest('base64') }],
    ['no header', body, (({ 'x-shopify-hmac-sha256': _, ...rest }) => rest)(shopifyHeaders(body))],
  ] as Array<[string, string, Record<string, string>]>) {
    const res = await post('shop', sent, h);
    t.equal(res.status, 401, `${name}: 401`);
    t.equal(res.body.error?.code, 'invalid_signature', `${name}: invalid_signature`);
  }
  t.equal(await countRecords(backends), before, 'nothing written');
  await sleep(1500);
  t.equal(deliveredOf(res.body.eventId).length, 1, 'the receiver got the event once');
});

t.test("the queue's own eventType source wins over the provider's header", async (t) => {
  t.equal((await api.manage('PUT', api.tenantPath('/queues/gh-own'), { authMode: 'github', sourceSecret: GITHUB_SECRET, eventType: { source: 'body', name: 'id' } })).status, 201);
  const body = bodyOf('from-the-body');
  const res = await post('gh-own', body, await githubHeaders(body, 'push'));
  t.equal(res.status, 202, JSON.stringify(res.body));
  const record = (await readRecords(backends)).find((r) => r.id === res.body.eventId);
  t.equal(record?.eventType, 'from-the-body');
});

t.test('validation, and queues without a source secret are paused', async (t) => {
  const bad = async (body: object, field: string) => {
    const res = await api.manage('PUT', api.tenantPath('/queues/bad'), body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.error.code, 'validation_failed');
    t.match(res.body.error.details, [{ field }]);
    t.notOk(JSON.stringify(res.body).includes('s3cret-value'), 'the secret is not echoed');
  };
  await bad({ sourceSecret: 's3cret-value' }, 'sourceSecret');
  await bad({ authMode: 'payments', sourceSecret: 's3cret-value' }, 'sourceSecret');
  await bad({ authMode: 'standard_webhooks', sourceSecret: 's3cret-value' }, 'sourceSecret');
  await bad({ authMode: 'webhooks' }, 'authMode');

  for (const authMode of ['standard_webhooks', 'github', 'shopify']) {
    const name = `paused-${authMode.replace('_', '-')}`;
    const put = await api.manage('PUT', api.tenantPath(`/queues/${name}`), { authMode, paymentsSecret: 'a payments secret is not a source secret' });
    t.equal(put.status, 201);
    t.equal(put.body.sourceSecretSet, false);
    const res = await post(name, '{}', { ...standardHeaders('{}'), ...(await githubHeaders('{}')), ...shopifyHeaders('{}') });
    t.equal(res.status, 409, `${authMode}: 409`);
    t.equal(res.body.error.code, 'queue_paused');
  }
  const list = await api.manage('GET', api.tenantPath('/queues'));
  const paused = (list.body.items as Array<{ name: string; state: string; pausedReason: string | null }>).find((q) => q.name === 'paused-github');
  t.equal(paused?.state, 'paused');
  t.match(paused?.pausedReason, /no source secret/);
});

t.test('archive and restore keep the source secret', async (t) => {
  t.equal((await api.manage('POST', api.tenantPath('/queues/shop/archive'))).status, 200);
  const body = bodyOf('shop-archived');
  const refused = await post('shop', body, shopifyHeaders(body));
  t.equal(refused.status, 409);
  t.equal(refused.body.error.code, 'queue_archived', 'a valid signature, but archived');
  const restored = await api.manage('POST', api.tenantPath('/queues/shop/restore'));
  t.equal(restored.status, 200);
  t.match(restored.body, { authMode: 'shopify', sourceSecretSet: true, state: 'accepting' });
  t.equal((await post('shop', body, shopifyHeaders(body))).status, 202, 'still verified with the kept secret');
});
