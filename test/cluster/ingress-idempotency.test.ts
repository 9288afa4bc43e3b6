import t from 'tap';
import { freshBackends } from '../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../helpers/nodes.js';
import { countRecords, readRecords } from '../helpers/topic.js';

/**
 * Idempotency-Key (docs/api.md#ingress): a duplicate within the window answers
 * 202 with the first event's id and replayed:true and writes nothing, even
 * when the duplicates race each other on two ingress nodes.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const nodeA = await startTestNode(t, backends, { roles: ['ingress', 'management'] });
const nodeB = await startTestNode(t, backends, { roles: ['ingress'] });
const api = clientFor(nodeA.port, creds);
const apiB = clientFor(nodeB.port, creds);

for (const [name, settings] of [['orders', {}], ['refunds', {}], ['no-dedup', { dedupWindowSeconds: 0 }], ['short-window', { dedupWindowSeconds: 1 }]] as const) {
  const res = await api.manage('PUT', api.tenantPath(`/queues/${name}`), settings);
  if (res.status >= 300) throw new Error(`${name}: ${JSON.stringify(res.body)}`);
}

const recordsWithKey = async (key: string) => (await readRecords(backends)).filter((r) => r.idempotencyKey === key);

t.test('a duplicate answers the first id with replayed:true and writes nothing', async (t) => {
  const first = await api.postEvent('orders', '{"n":1}', { 'idempotency-key': 'order-1' });
  t.equal(first.status, 202);
  t.notOk(first.body.replayed);
  const before = await countRecords(backends);
  const again = await api.postEvent('orders', '{"n":1, "retry":true}', { 'idempotency-key': 'order-1' });
  t.equal(again.status, 202);
  t.same(again.body, { eventId: first.body.eventId, replayed: true });
  const onB = await apiB.postEvent('orders', '{"n":1}', { 'idempotency-key': 'order-1' });
  t.same(onB.body, { eventId: first.body.eventId, replayed: true }, 'the other node knows it too');
  t.equal(await countRecords(backends), before, 'no second record');
  const records = await recordsWithKey('order-1');
  t.equal(records.length, 1);
  t.equal(records[0]?.id, first.body.eventId);
});

t.test('concurrent duplicates on two nodes produce exactly one record and one answer id', async (t) => {
  const keys = ['race-1', 'race-2', 'race-3', 'race-4', 'race-5'];
  const responses = await Promise.all(
    keys.flatMap((key) =>
      Array.from({ length: 16 }, (_, i) => (i % 2 ? apiB : api).postEvent('orders', JSON.stringify({ key, i }), { 'idempotency-key': key }).then((res) => ({ key, res }))),
    ),
  );
  const records = await readRecords(backends);
  for (const key of keys) {
    const mine = responses.filter((r) => r.key === key).map((r) => r.res);
    t.ok(mine.every((r) => r.status === 202), `${key}: all 202`);
    const ids = new Set(mine.map((r) => r.body.eventId));
    t.equal(ids.size, 1, `${key}: one event id in every answer`);
    t.equal(mine.filter((r) => !r.body.replayed).length, 1, `${key}: one first acceptance, the rest replayed`);
    const written = records.filter((r) => r.idempotencyKey === key);
    t.equal(written.length, 1, `${key}: exactly one record`);
    t.equal(written[0]?.id, [...ids][0], `${key}: the answered id is the record's`);
  }
});

t.test('keys are per queue, and a window of 0 turns deduplication off', async (t) => {
  const a = await api.postEvent('orders', '{}', { 'idempotency-key': 'shared' });
  const b = await api.postEvent('refunds', '{}', { 'idempotency-key': 'shared' });
  t.not(a.body.eventId, b.body.eventId, 'another queue: another event');
  const x = await api.postEvent('no-dedup', '{}', { 'idempotency-key': 'k' });
  const y = await api.postEvent('no-dedup', '{}', { 'idempotency-key': 'k' });
  t.not(x.body.eventId, y.body.eventId);
  t.notOk(y.body.replayed);
});

t.test('after the window the same key is a new event', async (t) => {
  const first = await api.postEvent('short-window', '{}', { 'idempotency-key': 'brief' });
  t.same((await api.postEvent('short-window', '{}', { 'idempotency-key': 'brief' })).body, { eventId: first.body.eventId, replayed: true });
  await new Promise((r) => setTimeout(r, 1300));
  const later = await api.postEvent('short-window', '{}', { 'idempotency-key': 'brief' });
  t.equal(later.status, 202);
  t.not(later.body.eventId, first.body.eventId);
  t.notOk(later.body.replayed);
});

t.test('sandbox and production events of one queue never answer for each other', async (t) => {
  const prod = await api.postEvent('orders', '{}', { 'idempotency-key': 'both' });
  const sandbox = await api.request('POST', `/events/sandbox/${creds.tenantPublicId}/orders`, {
    raw: '{}',
    headers: { 'x-api-key': creds.ingressKey, 'idempotency-key': 'both' },
  });
  t.equal(sandbox.status, 202);
  t.not(sandbox.body.eventId, prod.body.eventId);
});

t.test('a malformed Idempotency-Key is refused with invalid_header', async (t) => {
  for (const [name, key] of [['control character', 'a\tb'], ['over 255 bytes', 'k'.repeat(256)]]) {
    const res = await api.postEvent('orders', '{}', { 'idempotency-key': key! });
    t.equal(res.status, 400, name!);
    t.equal(res.body.error.code, 'invalid_header', name!);
  }
});
