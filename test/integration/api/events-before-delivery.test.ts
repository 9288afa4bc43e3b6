import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';

/**
 * GET …/events/{id} for an event no delivery node has consumed (here: none
 * runs, as when delivery is far behind): the event is found in the log by the
 * time its id carries and shown with every routed target pending (docs/delivery.md).
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['ingress', 'management'] });
const api = clientFor(node.port, creds);

t.test('an accepted event that delivery has not consumed shows with its targets pending', async (t) => {
  await api.wire('later', 'later-a', 'http://127.0.0.1:9/a');
  await api.wire('later', 'later-b', 'http://127.0.0.1:9/b');
  const posted = await api.postEvent('later', '{"x":1}', { 'x-service-event-type': 'thing.done', 'x-service-group-key': 'g-1', 'idempotency-key': 'idem-later' });
  t.equal(posted.status, 202);
  // An event whose body holds another event's id must not be taken for it.
  const decoy = await api.postEvent('later', JSON.stringify({ about: posted.body.eventId }));
  t.equal(decoy.status, 202);

  const got = await api.manage('GET', api.tenantPath(`/events/${posted.body.eventId}`));
  t.equal(got.status, 200, JSON.stringify(got.body));
  t.match(got.body, { eventId: posted.body.eventId, tenantPublicId: creds.tenantPublicId, queue: 'later', eventType: 'thing.done', groupKey: 'g-1', idempotencyKey: 'idem-later' });
  t.ok(Math.abs(Date.parse(got.body.receivedAt) - Date.now()) < 60_000, 'receivedAt is now');
  t.same(
    got.body.deliveries.map((d: { target: string; status: string; attempts: unknown[] }) => [d.target, d.status, d.attempts.length]).sort(),
    [['later-a', 'pending', 0], ['later-b', 'pending', 0]],
  );

  const other = await bootstrapDatabase(backends.databaseUrl);
  const stranger = clientFor(node.port, other);
  const foreign = await stranger.manage('GET', stranger.tenantPath(`/events/${posted.body.eventId}`));
  t.equal(foreign.status, 404, "another workspace does not see it");
});
