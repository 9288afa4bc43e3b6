import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { readRecords } from '../../helpers/topic.js';
import { connectDatabase } from '../../../src/storage/db.js';
import type { EventRecord } from '../../../src/event-log/event-record.js';

/**
 * Where the context (type, group key, partition key) and mapped headers come
 * from: the default headers, or a query parameter or top-level body field per
 * queue or workspace configuration (docs/api.md; docs/api.md#configuration-api). What the
 * sender sees is the answer; what delivery sees is the record in the topic.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['ingress', 'management'] });
const api = clientFor(node.port, creds);
const tenant = creds.tenantPublicId;

const put = async (name: string, settings: object) => {
  const res = await api.manage('PUT', api.tenantPath(`/queues/${name}`), settings);
  if (res.status >= 300) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
};
const post = (queue: string, body: string, headers: Record<string, string> = {}, query = '') =>
  api.request('POST', `/events/${tenant}/${queue}${query}`, {
    raw: body,
    headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json', ...headers },
  });
async function recordOf(eventId: string): Promise<EventRecord> {
  const found = (await readRecords(backends)).find((r) => r.id === eventId);
  if (!found) throw new Error(`no record ${eventId}`);
  return found;
}

t.test('by default the context comes from the X-Service-* headers', async (t) => {
  await put('plain', {});
  const res = await post('plain', '{"type":"ignored"}', {
    'x-service-event-type': 'order.created',
    'x-service-group-key': 'acme',
    'x-service-partition-key': 'order-42',
  }, '?type=ignored');
  t.equal(res.status, 202);
  t.match(await recordOf(res.body.eventId), { eventType: 'order.created', groupKey: 'acme', partitionKey: 'order-42' });
});

t.test('a queue can take each value from a query parameter or a top-level body field instead', async (t) => {
  await put('sourced', {
    eventType: { source: 'body', name: 'type' },
    groupKey: { source: 'query', name: 'tenant' },
    partitionKey: { source: 'header', name: 'X-Order-Id' },
  });
  const res = await post('sourced', '{"type":"invoice.paid","nested":{"type":"no"}}', {
    'x-service-event-type': 'ignored: the queue reads the body',
    'x-order-id': 'ord-7',
  }, '?tenant=t%C3%A9nant%201');
  t.equal(res.status, 202, JSON.stringify(res.body));
  t.match(await recordOf(res.body.eventId), { eventType: 'invoice.paid', groupKey: 'ténant 1', partitionKey: 'ord-7' });
  const numeric = await post('sourced', '{"type":42}', { 'x-order-id': 'o' }, '?tenant=g');
  t.equal((await recordOf(numeric.body.eventId)).eventType, '42', 'a number becomes its decimal text');
  const object = await post('sourced', '{"type":{"a":1}}', { 'x-order-id': 'o' }, '?tenant=g');
  t.equal(object.status, 400);
  t.equal(object.body.error.code, 'context_event_type_key_invalid', 'an object cannot be a type');
  const control = await post('sourced', '{"type":"a\\u0007b"}', { 'x-order-id': 'o' }, '?tenant=g');
  t.equal(control.body.error.code, 'context_event_type_key_invalid');
  const long = await post('sourced', '{"type":"t"}', { 'x-order-id': 'o' }, `?tenant=${'g'.repeat(256)}`);
  t.equal(long.body.error.code, 'context_group_key_too_long');
  const notJson = await post('sourced', 'type=invoice.paid', { 'x-order-id': 'o' }, '?tenant=g');
  t.equal(notJson.status, 400);
  t.equal(notJson.body.error.code, 'invalid_body');
  const notUtf8 = await api.request('POST', `/events/${tenant}/sourced?tenant=g`, {
    raw: Buffer.concat([Buffer.from('{"type":"'), Buffer.from([0xff]), Buffer.from('"}')]),
    headers: { 'x-api-key': creds.ingressKey, 'x-order-id': 'o' },
  });
  t.equal(notUtf8.body.error.code, 'invalid_body', 'bytes that are not UTF-8 are not JSON');
  const proto = await post('sourced', '{"__proto__":"x","type":"t"}', { 'x-order-id': 'o' }, '?tenant=g');
  t.equal(proto.status, 202, 'a __proto__ field is just a field');
});

t.test('a required group key read from the body', async (t) => {
  await put('grouped-body', { groupKeyRequired: true, groupKey: { source: 'body', name: 'customer' } });
  const missing = await post('grouped-body', '{"other":1}', { 'x-service-group-key': 'not read' });
  t.equal(missing.status, 400);
  t.equal(missing.body.error.code, 'context_group_key_required');
  const empty = await post('grouped-body', '{"customer":""}');
  t.equal(empty.body.error.code, 'context_group_key_required', 'an empty value is no value');
  const ok = await post('grouped-body', '{"customer":"c-1"}');
  t.equal(ok.status, 202);
  t.equal((await recordOf(ok.body.eventId)).groupKey, 'c-1');
});

t.test('workspace defaults apply to queues that name no source of their own', async (t) => {
  const sql = connectDatabase(backends.databaseUrl, 1);
  await sql`UPDATE workspaces SET settings = ${sql.json({ ingress: { eventType: { source: 'query', name: 'event' }, groupKey: { source: 'nonsense', name: 'x' } } })}
            WHERE public_id = ${tenant}`;
  await sql.end();
  // A queue written after the workspace change: its cache entry is fresh.
  await put('ws-default', {});
  await put('ws-override', { eventType: { source: 'header', name: 'X-Kind' } });
  const a = await post('ws-default', '{}', { 'x-service-event-type': 'header', 'x-service-group-key': 'g' }, '?event=from.query');
  t.equal(a.status, 202);
  t.match(await recordOf(a.body.eventId), { eventType: 'from.query', groupKey: 'g' }, 'an invalid workspace entry is ignored, not fatal');
  const b = await post('ws-override', '{}', { 'x-kind': 'from.header' }, '?event=from.query');
  t.equal((await recordOf(b.body.eventId)).eventType, 'from.header', 'the queue setting wins');
});

t.test('mapped headers are lifted at accept and stored with the event in the configured order', async (t) => {
  await put('mapped', {
    mappedHeaders: [
      { from: { source: 'body', name: 'customerId' }, as: 'X-Customer', required: true },
      { from: { source: 'query', name: 'region' }, as: 'X-Region' },
      { from: { source: 'header', name: 'X-Trace' }, as: 'X-Trace-Id' },
      { from: { source: 'body', name: 'missing' }, as: 'X-Optional' },
    ],
  });
  const res = await post('mapped', '{"customerId":1234,"x":true}', { 'x-trace': 'tr-1' }, '?region=eu-west');
  t.equal(res.status, 202, JSON.stringify(res.body));
  t.same((await recordOf(res.body.eventId)).mappedHeaders, [['X-Customer', '1234'], ['X-Region', 'eu-west'], ['X-Trace-Id', 'tr-1']]);
  const required = await post('mapped', '{"x":true}', { 'x-trace': 'tr-1' });
  t.equal(required.status, 400);
  t.equal(required.body.error.code, 'outbound_header_required');
  t.match(required.body.error.message, /X-Customer/);
  const cjk = await post('mapped', '{"customerId":"東京"}');
  t.equal(cjk.body.error.code, 'outbound_header_invalid', 'characters no header can carry are refused at accept, not at every delivery');
  const none = await post('plain', '{}');
  t.equal((await recordOf(none.body.eventId)).mappedHeaders, undefined, 'queues without mapped headers store none');
});

t.test('queue settings validation names each bad field', async (t) => {
  const res = await api.manage('PUT', api.tenantPath('/queues/bad'), {
    authMode: 'magic',
    ipAllowlist: ['10.0.0.0/8', 'not-an-ip', '10.0.0.0/33'],
    eventType: { source: 'cookie', name: 'x' },
    groupKey: { source: 'header', name: 'bad header' },
    mappedHeaders: [
      { from: { source: 'body', name: 'a' }, as: 'X-Service-Thing' },
      { from: { source: 'body', name: 'b' }, as: 'Authorization' },
      { from: { source: 'body', name: 'c' }, as: 'X-Ok' },
      { from: { source: 'body', name: 'd' }, as: 'x-ok' },
    ],
    outboundSigning: 'rsa',
  });
  t.equal(res.status, 400);
  t.equal(res.body.error.code, 'validation_failed');
  t.same(res.body.error.details.map((d: { field: string }) => d.field).sort(), [
    'authMode', 'eventType.source', 'groupKey.name', 'ipAllowlist[1]', 'ipAllowlist[2]', 'mappedHeaders[0].as', 'mappedHeaders[1].as', 'mappedHeaders[3].as', 'outboundSigning',
  ]);
  const recalc = await api.manage('PUT', api.tenantPath('/queues/bad'), {
    authMode: 'payments',
    paymentsSecret: 's',
    paymentsSignatureRecalculation: true,
    mappedHeaders: [{ from: { source: 'header', name: 'Payments-Signature' }, as: 'Payments-Signature' }],
  });
  t.equal(recalc.status, 400, 'Payments-Signature cannot be mapped while recalculation is on');
  t.match(recalc.body.error.details, [{ field: 'mappedHeaders[0].as' }]);
  const good = await put('every-setting', {
    authMode: 'signed_request',
    ingress: 'accepting',
    archived: false,
    ipAllowlist: ['127.0.0.1', '::1/128'],
    groupKeyRequired: true,
    eventType: { source: 'query', name: 'type' },
    groupKey: { source: 'body', name: 'g' },
    partitionKey: { source: 'header', name: 'X-P' },
    mappedHeaders: [{ from: { source: 'body', name: 'c' }, as: 'X-C', required: true }],
    outboundSigning: 'hmac',
    hopBudget: 5,
    dedupWindowSeconds: 3600,
  });
  t.equal(good.status, 201);
  t.match(good.body, { authMode: 'signed_request', outboundSigning: 'hmac', hopBudget: 5, paymentsSecretSet: false, mappedHeaders: [{ as: 'X-C', required: true }] });
});
