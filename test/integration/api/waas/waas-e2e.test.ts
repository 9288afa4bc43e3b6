import t from 'tap';
import { freshBackends } from '../../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../../helpers/nodes.js';
import { startReceiver } from '../../../helpers/receiver.js';
import { ApiClient } from '../../../helpers/api-client.js';

// The whole producer → partner story over HTTP, as two users would live it:
// the producer publishes a stream and invites; the partner accepts onto a new
// free account, subscribes, routes the receiving queue to its own receiver
// with the /v1 API; the producer activates one customer (group key); events
// flow through the gate; the metrics series counts the distributed traffic.
t.test('producer and partner, end to end, with the gate and the metrics series', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const node = await startTestNode(t, backends, { waas: { metricsFlushMs: 100, gateViewTtlSeconds: 3600 } });
  const producer = clientFor(node.port, creds);
  const receiver = await startReceiver(t);
  const T = creds.tenantPublicId;

  // Producer: publish and invite.
  const stream = await producer.manage('PUT', '/waas/streams', {
    producerTenantPublicId: T, name: 'orders', description: 'Orders as they happen',
    eventTypes: ['order.created', 'order.paid'], payloadSchema: '{"type":"object"}', isPublic: true,
  });
  t.equal(stream.status, 200);
  const invite = await producer.manage('POST', '/waas/integrations', { producerTenantPublicId: T, email: 'ops@partner.test' });
  t.equal(invite.status, 201);
  t.equal(invite.body.status, 'Pending');

  // Partner: accept onto a new free account, read the catalog, subscribe, route.
  const accepted = await producer.request('POST', `/waas/integrations/${invite.body.publicId}/accept`, { body: { inviteToken: invite.body.inviteToken } });
  t.equal(accepted.status, 200);
  const partner = new ApiClient(producer.baseUrl, {
    licensePublicId: accepted.body.licensePublicId, tenantPublicId: accepted.body.receivingTenantPublicId, buildKey: accepted.body.buildKey, ingressKey: '',
  });
  const catalog = await partner.manage('GET', `/waas/producer/${T}/catalog`);
  t.same(catalog.body.data.map((i: { publicId: string }) => i.publicId), [stream.body.publicId], 'the partner sees the published stream');
  const sub = await partner.manage('POST', `/waas/integrations/${invite.body.publicId}/subscriptions`, { catalogEntryPublicId: stream.body.publicId });
  t.equal(sub.status, 201);
  t.equal(sub.body.status, 'live');
  t.equal((await partner.manage('PUT', partner.tenantPath('/targets/warehouse'), { url: `${receiver.url}/webhooks` })).status, 201);
  t.equal((await partner.manage('PUT', partner.tenantPath(`/queues/${sub.body.receivingQueue}/targets/warehouse`))).status, 201);

  // Producer: activate one customer.
  const act = await producer.manage('POST', '/waas/activations', { producerTenantPublicId: T, groupKey: 'acme', integrationPublicId: invite.body.publicId });
  t.equal(act.status, 201);

  // Events: the gate lets through only acme's. All share a partition key, and
  // acme's come last: had any earlier one been routed, it would arrive first.
  const post = async (groupKey: string | null, n: number) => {
    const headers: Record<string, string> = { 'x-service-partition-key': 'e2e', 'x-service-event-type': 'order.created' };
    if (groupKey) headers['x-service-group-key'] = groupKey;
    const res = await producer.postEvent('orders', JSON.stringify({ n, customer: groupKey }), headers);
    t.equal(res.status, 202);
    return res.body.eventId as string;
  };
  const gated = [await post('globex', 1), await post('globex', 2), await post(null, 3)];
  const open = [];
  for (let n = 4; n < 9; n++) open.push(await post('acme', n));
  await receiver.waitFor((r) => r.length >= open.length, 30_000, "acme's five events");
  t.same(receiver.eventIds(), open, "exactly acme's events, in accept order");
  t.notOk(receiver.eventIds().some((id) => gated.includes(id)), 'nothing of globex or without a group key');
  const first = receiver.requests[0]!;
  t.equal(first.path, '/webhooks');
  t.equal(first.headers['x-service-event-type'], 'order.created');
  t.same(JSON.parse(first.body.toString()), { n: 4, customer: 'acme' });

  // One delivery that fails for good (400 is not retried).
  receiver.responder = (_req, res) => {
    res.statusCode = 400;
    res.end('no');
  };
  const failing = await post('acme', 9);
  await receiver.waitFor((r) => r.some((x) => x.headers['x-service-event-id'] === failing), 30_000, 'the failing delivery');

  // The series counts what went to the partner: 6 routed, 5 delivered, 1 failed.
  const totals = async (history: string) => {
    const res = await producer.manage('GET', `/waas/producer/${T}/metrics/series?history=${history}`);
    t.equal(res.status, 200);
    return res.body.series.reduce(
      (s: { accepted: number; delivered: number; failed: number }, p: { accepted: number; delivered: number; failed: number }) =>
        ({ accepted: s.accepted + p.accepted, delivered: s.delivered + p.delivered, failed: s.failed + p.failed }),
      { accepted: 0, delivered: 0, failed: 0 },
    );
  };
  const expected = { accepted: 6, delivered: 5, failed: 1 };
  const until = Date.now() + 15_000;
  let seen = await totals('1h');
  while (JSON.stringify(seen) !== JSON.stringify(expected) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    seen = await totals('1h');
  }
  t.same(seen, expected, 'last hour');
  t.same(await totals('24h'), expected, 'last day');
  t.same(await totals('7d'), expected, 'last week');
  const partnerSeries = await partner.manage('GET', `/waas/producer/${accepted.body.receivingTenantPublicId}/metrics/series?history=1h`);
  t.equal(partnerSeries.status, 200);
  t.equal(partnerSeries.body.series.reduce((n: number, p: { accepted: number }) => n + p.accepted, 0), 0, "the partner's own series is its own");
});
