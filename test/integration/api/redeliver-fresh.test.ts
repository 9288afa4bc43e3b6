import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';

/**
 * POST …/events/{id}/redeliver right after the event was delivered, before the
 * attempt log (written in batches) has it: redelivery finds the event the way
 * GET does (the event log) and delivers it again, same id. It used to answer
 * 404 until the attempt log was flushed while GET of the same id found it.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
// A slow attempt-log flush keeps the window open long enough to hit it every time.
const node = await startTestNode(t, backends, { delivery: { ...deliveryDefaults(), attemptLog: { flushMs: 10_000, maxBatch: 2000, maxBuffered: 50_000 } } });
const api = clientFor(node.port, creds);

function deliveryDefaults(): Record<string, unknown> {
  return { allowNetworks: ['127.0.0.0/8'], allowLoopbackInSingleNode: false, commitIntervalMs: 50, retry: { scheduleSeconds: [1], horizonSeconds: 3600, holdInMemoryMs: 1000 } };
}

t.test('redeliver just after delivery, before the attempt log has it: 202 and a second delivery with the same id', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('fresh', 'fresh-target', `${receiver.url}/in`);
  const posted = await api.postEvent('fresh', '{"n":1}');
  t.equal(posted.status, 202);
  await receiver.waitFor((r) => r.length >= 1, 30_000, 'the first delivery');

  const shown = await api.manage('GET', api.tenantPath(`/events/${posted.body.eventId}`));
  t.equal(shown.status, 200, 'GET finds it');
  const redelivered = await api.manage('POST', api.tenantPath(`/events/${posted.body.eventId}/redeliver`), {});
  t.equal(redelivered.status, 202, JSON.stringify(redelivered.body));
  t.match(redelivered.body, { eventId: posted.body.eventId, targets: [{ target: 'fresh-target', status: 'pending' }] });
  await receiver.waitFor((r) => r.length >= 2, 30_000, 'the redelivery');
  t.same(receiver.eventIds(), [posted.body.eventId, posted.body.eventId], 'delivered again with the same event id');
});
