import t, { type Test } from 'tap';
import { freshBackends } from '../../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../../helpers/nodes.js';
import { startReceiver } from '../../../helpers/receiver.js';
import { arrives, received, Waas } from '../../../helpers/waas.js';

// The routing gate in delivery, against real Kafka, Postgres and Redis: an
// event of a producer's stream reaches a partner only when the subscription is
// live AND the event's group key is activated for the partner.
//
// "Nothing delivered" is proven without sleeping: after the gated event E, a
// marker M is posted with the same partition key to a second stream that is
// always open, and routed to the same partner target. Delivery keeps accept
// order per partition key and target, so once M has arrived, E would have
// arrived before it had it been routed there.

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const waas = new Waas(clientFor(node.port, creds));
const partnerReceiver = await startReceiver(t);
const ownReceiver = await startReceiver(t);

const orders = await waas.putStream('orders', { eventTypes: ['order.created'] });
const control = await waas.putStream('control');
await waas.producer.wire('orders', 'own-hook', `${ownReceiver.url}/own`);
const partner = await waas.newPartner('partner@example.test');
await waas.subscribe(partner, orders.publicId);
await waas.subscribe(partner, control.publicId);
await waas.partnerTarget(partner, 'orders', 'hook', `${partnerReceiver.url}/hook`);
await waas.partnerTarget(partner, 'control', 'hook', `${partnerReceiver.url}/hook`);
await waas.activate(partner, 'ctl');

let lane = 0;
const nextLane = () => `lane-${++lane}`;

async function notDelivered(t: Test, eventId: string, partitionKey: string, what: string): Promise<void> {
  const marker = await waas.post('control', 'ctl', partitionKey, { marker: partitionKey });
  await arrives(partnerReceiver, marker, `the marker after ${what}`);
  t.notOk(received(partnerReceiver, eventId), `${what}: not delivered to the partner`);
}

t.test('subscribed but not activated → nothing delivered', async (t) => {
  t.equal(await waas.status(partner, orders.publicId), 'live', 'the subscription is live');
  const pk = nextLane();
  const e = await waas.post('orders', 'cust-1', pk, { n: 1 });
  await arrives(ownReceiver, e, "the producer's own target");
  await notDelivered(t, e, pk, 'an event whose group key is not activated');
  const noKey = await waas.post('orders', null, pk, { n: 2 });
  await notDelivered(t, noKey, pk, 'an event without a group key');
});

t.test('activate → delivered, only for the activated group key', async (t) => {
  const act = await waas.activate(partner, 'cust-1');
  t.match(act, { publicId: /^act_/, status: 'Active' });
  const pk = nextLane();
  const e = await waas.post('orders', 'cust-1', pk, { n: 3 });
  await arrives(partnerReceiver, e, 'the activated event');
  const got = partnerReceiver.requests.find((r) => r.headers['x-service-event-id'] === e)!;
  t.same(JSON.parse(got.body.toString()), { n: 3 }, 'the body as posted');
  const other = await waas.post('orders', 'cust-2', pk, { n: 4 });
  await notDelivered(t, other, pk, 'another group key');
});

t.test('block the stream → paused and nothing delivered', async (t) => {
  await waas.block(partner, 'streams', orders.publicId);
  t.equal(await waas.status(partner, orders.publicId), 'paused', 'producer view');
  t.equal(await waas.partnerStatus(partner, orders.publicId), 'paused', 'partner view');
  t.equal(await waas.status(partner, control.publicId), 'live', 'the other stream stays live');
  const pk = nextLane();
  const e = await waas.post('orders', 'cust-1', pk, { n: 5 });
  await arrives(ownReceiver, e, "the producer's own target still gets it");
  await notDelivered(t, e, pk, 'an event of a blocked stream');
});

t.test('package block plus stream un-block → still paused', async (t) => {
  const pkg = await waas.createPackage('Commerce');
  await waas.addToPackage(pkg.publicId, orders.publicId);
  await waas.block(partner, 'packages', pkg.publicId);
  await waas.unblock(partner, 'streams', orders.publicId);
  t.equal(await waas.status(partner, orders.publicId), 'paused');
  const pk = nextLane();
  const e = await waas.post('orders', 'cust-1', pk, { n: 6 });
  await notDelivered(t, e, pk, 'an event of a stream still covered by a package block');

  t.test('un-block the package → live again', async (t) => {
    await waas.unblock(partner, 'packages', pkg.publicId);
    t.equal(await waas.status(partner, orders.publicId), 'live');
    t.equal(await waas.partnerStatus(partner, orders.publicId), 'live');
    const e2 = await waas.post('orders', 'cust-1', nextLane(), { n: 7 });
    await arrives(partnerReceiver, e2, 'the event after the package un-block');
  });
});

t.test('revoke → stops; activating again answers the same publicId and resumes', async (t) => {
  const before = await waas.activate(partner, 'cust-1');
  await waas.revoke(partner, 'cust-1');
  const pk = nextLane();
  const e = await waas.post('orders', 'cust-1', pk, { n: 8 });
  await notDelivered(t, e, pk, 'an event of a revoked group key');
  const again = await waas.activate(partner, 'cust-1');
  t.equal(again.publicId, before.publicId, 'same activation');
  const e2 = await waas.post('orders', 'cust-1', nextLane(), { n: 9 });
  await arrives(partnerReceiver, e2, 'the event after re-activation');
});

t.test('a stream in two packages, one blocked → blocked', async (t) => {
  const a = await waas.createPackage('Retail');
  const b = await waas.createPackage('Wholesale');
  await waas.addToPackage(a.publicId, orders.publicId);
  await waas.addToPackage(b.publicId, orders.publicId);
  await waas.block(partner, 'packages', b.publicId);
  t.equal(await waas.status(partner, orders.publicId), 'paused');
  const pk = nextLane();
  const e = await waas.post('orders', 'cust-1', pk, { n: 10 });
  await notDelivered(t, e, pk, 'an event of a stream one of whose packages is blocked');
  await waas.unblock(partner, 'packages', b.publicId);
  const e2 = await waas.post('orders', 'cust-1', nextLane(), { n: 11 });
  await arrives(partnerReceiver, e2, 'the event after the un-block');
});

t.test('ending the subscription stops delivery; subscribing again resumes it', async (t) => {
  const subs = await partner.api.manage('GET', `/waas/integrations/${partner.integrationPublicId}/subscriptions`);
  const sub = subs.body.data.find((s: { catalogEntryPublicId: string }) => s.catalogEntryPublicId === orders.publicId);
  const end = await partner.api.manage('DELETE', `/waas/integrations/${partner.integrationPublicId}/subscriptions/${sub.publicId}`);
  t.equal(end.status, 204);
  const pk = nextLane();
  const e = await waas.post('orders', 'cust-1', pk, { n: 12 });
  await notDelivered(t, e, pk, 'an event after the subscription ended');
  const again = await waas.subscribe(partner, orders.publicId);
  t.equal(again.receivingQueue, 'orders', 'the same receiving queue, still routed to the partner target');
  const e2 = await waas.post('orders', 'cust-1', nextLane(), { n: 13 });
  await arrives(partnerReceiver, e2, 'the event after subscribing again');
});
