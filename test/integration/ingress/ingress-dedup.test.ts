import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { readRecords } from '../../helpers/topic.js';

// Idempotency-Key on one node, on either backend (the two-node race is in test/cluster).
t.test('a duplicate Idempotency-Key answers the first id with replayed:true and writes nothing', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const node = await startTestNode(t, backends, { roles: ['ingress', 'management'] });
  const api = clientFor(node.port, creds);
  t.equal((await api.manage('PUT', api.tenantPath('/queues/orders'), {})).status, 201);

  const first = await api.postEvent('orders', '{"n":1}', { 'idempotency-key': 'order-1' });
  t.equal(first.status, 202);
  t.notOk(first.body.replayed);
  const again = await Promise.all([1, 2, 3].map(() => api.postEvent('orders', '{"n":2}', { 'idempotency-key': 'order-1' })));
  for (const res of again) t.same(res.body, { eventId: first.body.eventId, replayed: true });
  const other = await api.postEvent('orders', '{"n":3}', { 'idempotency-key': 'order-2' });
  t.not(other.body.eventId, first.body.eventId, 'another key is another event');
  const stored = (await readRecords(backends)).filter((r) => r.idempotencyKey === 'order-1');
  t.equal(stored.length, 1, 'one record for the key');
  t.same(stored[0]!.body.toString(), '{"n":1}', 'the first body is the one kept');
});
