import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { sleep, waitForEvent } from '../../helpers/delivery.js';

// docs/delivery.md#delivery-engine: a target failing continuously for 5 days (here: 3 s) is disabled.
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, {
  delivery: { allowNetworks: ['127.0.0.0/8'], allowLoopbackInSingleNode: false, retry: { scheduleSeconds: [1], horizonSeconds: 3600, holdInMemoryMs: 1000 }, disableAfterFailingSeconds: 3 },
});
const api = clientFor(node.port, creds);

t.test('a target whose every attempt fails for the configured time is disabled, with the reason shown', async (t) => {
  const receiver = await startReceiver(t);
  receiver.responder = (_req, res) => {
    res.statusCode = 500;
    res.end();
  };
  await api.wire('streak', 'streak-target', `${receiver.url}/s`);
  const posted = await api.postEvent('streak', '{}', { 'x-service-partition-key': 'k' });
  const started = Date.now();
  const until = Date.now() + 20_000;
  let target: any;
  do {
    await sleep(250);
    target = (await api.manage('GET', api.tenantPath('/targets/streak-target'))).body;
  } while (!target.disabled && Date.now() < until);
  t.comment(`disabled after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  t.equal(target.disabled, true);
  t.match(target.disabledReason, /every delivery attempt has failed since \d{4}-\d\d-\d\dT/);
  await sleep(300);
  const later = await api.postEvent('streak', '{}', { 'x-service-partition-key': 'other' });
  await waitForEvent(api, later.body.eventId, (e) => e.deliveries[0]?.status === 'blocked');
  t.comment(`later event blocked after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await waitForEvent(api, posted.body.eventId, (e) => ['blocked', 'failed'].includes(e.deliveries[0]?.status));
  t.comment(`first event over after ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

t.test('a success ends the streak: a target that recovers in time stays enabled', async (t) => {
  const receiver = await startReceiver(t);
  let failing = true;
  receiver.responder = (_req, res) => {
    res.statusCode = failing ? 500 : 200;
    res.end();
  };
  await api.wire('recover', 'recover-target', `${receiver.url}/r`);
  const posted = await api.postEvent('recover', '{}');
  await sleep(1_500);
  failing = false;
  await waitForEvent(api, posted.body.eventId, (e) => e.deliveries[0]?.status === 'delivered');
  failing = true;
  await api.postEvent('recover', '{}');
  await sleep(2_000); // a new streak has begun, shorter than 3 s
  const target = (await api.manage('GET', api.tenantPath('/targets/recover-target'))).body;
  t.equal(target.disabled, false, 'the first streak ended with the success; the second is still short');
});
