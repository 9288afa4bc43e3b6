import t from 'tap';
import Stripe from 'stripe';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { countRecords, readRecords } from '../../helpers/topic.js';

/**
 * `payments` queues verify the payment processor's Payments-Signature with the
 * queue's secret (docs/api.md#authentication, Stripe's scheme). The headers here are made by
 * Stripe's own library, as a real processor would send them.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['ingress', 'management'] });
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;
const stripe = new Stripe('sk_test_streamgate');
const SECRET = 'whsec_test_payments_secret_0123456789';

const put = async (name: string, settings: object) => {
  const res = await api.manage('PUT', api.tenantPath(`/queues/${name}`), settings);
  if (res.status >= 300) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
};
await put('charges', { authMode: 'payments', paymentsSecret: SECRET, paymentsSignatureRecalculation: true });
await put('charges-plain', { authMode: 'payments', paymentsSecret: SECRET });

const post = (queue: string, body: string, signature?: string) =>
  api.request('POST', `/events/${tenant}/${queue}`, {
    raw: body,
    headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'payments-signature': signature }) },
  });

t.test('the payments secret is write-only in the configuration API', async (t) => {
  const got = await api.manage('GET', api.tenantPath('/queues/charges'));
  t.equal(got.status, 200);
  t.equal(got.body.authMode, 'payments');
  t.equal(got.body.paymentsSecretSet, true);
  t.notOk('paymentsSecret' in got.body, 'the secret is never returned');
  t.notOk(JSON.stringify(got.body).includes(SECRET));
});

t.test('a Stripe-signed event is accepted, bytes untouched, marked for recalculation', async (t) => {
  // Whitespace and key order a re-serialiser would change: the signature is over these exact bytes.
  const body = '{ "id": "evt_1", "type": "charge.succeeded",\n  "amount": 1200 }';
  const res = await post('charges', body, stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }));
  t.equal(res.status, 202, JSON.stringify(res.body));
  const plain = await post('charges-plain', body, stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }));
  t.equal(plain.status, 202);
  const records = await readRecords(backends);
  const recalc = records.find((r) => r.id === res.body.eventId);
  const notRecalc = records.find((r) => r.id === plain.body.eventId);
  t.equal(recalc?.body.toString(), body, 'exact bytes');
  t.equal(recalc?.paymentsRecalc, true, 'verified on a queue with recalculation on');
  t.equal(notRecalc?.paymentsRecalc, undefined, 'recalculation off: not marked');
});

t.test('several v1 signatures (secret rotation at the processor): one matching is enough', async (t) => {
  const body = '{"rotating":true}';
  const ts = Math.floor(Date.now() / 1000);
  const ours = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: ts });
  const theirs = stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_old', timestamp: ts });
  const v1 = (h: string) => h.split(',').find((p) => p.startsWith('v1='))!;
  t.equal((await post('charges', body, `t=${ts},${v1(theirs)},${v1(ours)},v0=abc`)).status, 202);
});

t.test('refusals: wrong secret, changed body, stale timestamp, missing or malformed header', async (t) => {
  const body = '{"amount":1}';
  const before = await countRecords(backends);
  const cases: Array<[string, string | undefined, string]> = [
    ['another secret', stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_wrong' }), 'invalid_signature'],
    ['signed over another body', stripe.webhooks.generateTestHeaderString({ payload: '{"amount":2}', secret: SECRET }), 'invalid_signature'],
    ['10 minutes old', stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 600 }), 'timestamp_out_of_range'],
    ['no header', undefined, 'invalid_signature'],
    ['no v1', `t=${Math.floor(Date.now() / 1000)}`, 'invalid_signature'],
    ['garbage', 'hello', 'invalid_signature'],
  ];
  for (const [name, signature, code] of cases) {
    const res = await post('charges', body, signature);
    t.equal(res.status, 401, `${name}: 401`);
    t.equal(res.body.error.code, code, `${name}: ${code}`);
  }
  t.equal(await countRecords(backends), before, 'nothing written');
});

t.test('recalculation needs a payments queue; payments queues without a secret are paused', async (t) => {
  const bad = await api.manage('PUT', api.tenantPath('/queues/wrong'), { paymentsSignatureRecalculation: true });
  t.equal(bad.status, 400);
  t.match(bad.body.error.details, [{ field: 'paymentsSignatureRecalculation' }]);
  await put('no-secret', { authMode: 'payments' });
  const res = await post('no-secret', '{}', stripe.webhooks.generateTestHeaderString({ payload: '{}', secret: SECRET }));
  t.equal(res.status, 409);
  t.equal(res.body.error.code, 'queue_paused');
});
