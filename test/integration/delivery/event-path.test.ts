import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';

// One node (all roles) on fresh backends; each subtest wires its own queue.
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { server: { port: 0, host: '127.0.0.1', maxBodyBytes: 4096 } });
const api = clientFor(node.port, creds);

t.test('an accepted event reaches the receiver with the exact body bytes and its event id', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('bytes', 'bytes-target', `${receiver.url}/hook?x=1`);
  // Bytes that are not valid UTF-8 and JSON-ish whitespace: nothing may re-encode them.
  const body = Buffer.concat([Buffer.from('{"a": 1,\n  "b":"é"}  '), Buffer.from([0xff, 0x00, 0xfe])]);
  const res = await api.postEvent('bytes', body, { 'content-type': 'application/octet-stream', 'idempotency-key': 'idem-1' });
  t.equal(res.status, 202);
  t.match(res.body.eventId, /^evt_[A-Za-z0-9_-]{24}$/);
  await receiver.waitFor((r) => r.length >= 1, 30_000, 'the delivery');
  const got = receiver.requests[0]!;
  t.same(got.body, body, 'body bytes identical');
  t.equal(got.headers['x-service-event-id'], res.body.eventId);
  t.equal(got.headers['idempotency-key'], 'idem-1');
  t.equal(got.headers['content-type'], 'application/octet-stream');
  t.equal(got.path, '/hook?x=1');
  t.equal(got.headers['x-service-path'], `sg:${creds.tenantPublicId}/bytes`);
});

t.test('100 events with one partition key arrive in the order they were accepted', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('ordered', 'ordered-target', `${receiver.url}/in-order`);
  const accepted: string[] = [];
  for (let i = 0; i < 100; i++) {
    const res = await api.postEvent('ordered', JSON.stringify({ seq: i }), { 'x-service-partition-key': 'customer-42' });
    t.equal(res.status, 202);
    accepted.push(res.body.eventId);
  }
  await receiver.waitFor((r) => r.length >= 100, 60_000, '100 deliveries');
  t.same(receiver.eventIds(), accepted, 'delivered in accept order');
  t.same(receiver.requests.map((r) => JSON.parse(r.body.toString()).seq), [...Array(100).keys()]);
});

t.test('events of one key wait for a failing earlier event; other keys flow', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('lanes', 'lanes-target', `${receiver.url}/lanes`);
  let failuresLeft = 3;
  receiver.responder = (req, res) => {
    const { key } = JSON.parse(req.body.toString());
    if (key === 'slow' && failuresLeft > 0) {
      failuresLeft--;
      res.statusCode = 503;
      return void res.end('try later');
    }
    res.end('ok');
  };
  const slow1 = await api.postEvent('lanes', JSON.stringify({ key: 'slow', n: 1 }), { 'x-service-partition-key': 'slow' });
  const slow2 = await api.postEvent('lanes', JSON.stringify({ key: 'slow', n: 2 }), { 'x-service-partition-key': 'slow' });
  const fast = await api.postEvent('lanes', JSON.stringify({ key: 'fast', n: 1 }), { 'x-service-partition-key': 'fast' });
  await receiver.waitFor((r) => r.filter((x) => x.headers['x-service-event-id'] === slow2.body.eventId).length === 1, 30_000, 'slow2');
  const ids = receiver.eventIds();
  const lastSlow1 = ids.lastIndexOf(slow1.body.eventId);
  t.equal(ids.filter((id) => id === slow1.body.eventId).length, 4, 'three failures then a success');
  t.ok(ids.indexOf(slow2.body.eventId) > lastSlow1, 'the second event of the failing key waited for the first');
  t.ok(ids.indexOf(fast.body.eventId) < lastSlow1, 'the other key was delivered while the first key was retrying');
});

t.test('ingress refuses bad credentials and unknown queues with the reference codes', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('guarded', 'guarded-target', receiver.url);
  const path = `/events/${creds.tenantPublicId}/guarded`;
  const cases: Array<[string, Record<string, string>, string, number, string]> = [
    ['no key', {}, path, 401, 'missing_api_key'],
    ['wrong secret', { 'x-api-key': creds.ingressKey.slice(0, -2) + 'xx' }, path, 401, 'invalid_api_key'],
    ['garbage key', { 'x-api-key': 'hello' }, path, 401, 'invalid_api_key'],
    ['unknown queue', { 'x-api-key': creds.ingressKey }, `/events/${creds.tenantPublicId}/nope`, 404, 'not_found'],
    ['unknown tenant', { 'x-api-key': creds.ingressKey }, '/events/ten_doesnotexist000000000/guarded', 404, 'not_found'],
  ];
  for (const [name, headers, p, status, code] of cases) {
    const res = await api.request('POST', p, { raw: '{"x":1}', headers: { 'content-type': 'application/json', ...headers } });
    t.equal(res.status, status, `${name}: status`);
    t.equal(res.body?.error?.code, code, `${name}: code`);
    t.type(res.body?.error?.message, 'string', `${name}: message`);
  }
  await new Promise((r) => setTimeout(r, 500));
  t.equal(receiver.requests.length, 0, 'nothing refused was delivered');
});

t.test('a body over the limit gets 413 payload_too_large', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('small', 'small-target', receiver.url);
  const res = await api.postEvent('small', Buffer.alloc(5000, 'a'));
  t.equal(res.status, 413);
  t.equal(res.body.error.code, 'payload_too_large');
  const ok = await api.postEvent('small', Buffer.alloc(4000, 'a'));
  t.equal(ok.status, 202, 'a body under the limit is still accepted');
});

t.test('health and readiness', async (t) => {
  t.equal((await api.request('GET', '/healthz')).status, 200);
  const ready = await api.request('GET', '/readyz');
  t.equal(ready.status, 200);
  t.same(ready.body.roles.sort(), ['delivery', 'ingress', 'management']);
  const unknown = await api.request('GET', '/no/such/path');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.code, 'not_found');
});
