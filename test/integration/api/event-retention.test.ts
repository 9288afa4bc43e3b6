import t from 'tap';
import { backendConfig, freshBackends, TEST_BACKEND } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { waitForEvent } from '../../helpers/delivery.js';
import { dropAllRecords, setTopicSetting, topicSetting } from '../../helpers/read-topic.js';
import { ensureTopic } from '../../../src/event-log/kafka/kafka-topic.js';
import { loadConfig } from '../../../src/config/load-config.js';

/**
 * retention.hours and what an event becomes once the event log has dropped it:
 * readable until then, 404 `not_found` saying it expired afterwards (for GET
 * and redeliver alike, never a half-empty answer). The embedded log sweeps its
 * own records (here after 18 s); on Kafka the broker's retention runs every few
 * minutes, so the test drops the records the way retention does (DeleteRecords)
 * and checks the topic's retention.ms separately.
 */
const RETENTION_HOURS = 0.005; // 18 s
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { retention: { hours: RETENTION_HOURS } });
const api = clientFor(node.port, creds);

t.test('an event is shown and redelivered while the log holds it; past retention both answer 404 expired', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('kept', 'kept-target', `${receiver.url}/kept`);
  const posted = await api.postEvent('kept', '{"kept":1}');
  t.equal(posted.status, 202);
  const eventId = posted.body.eventId as string;
  const event = await waitForEvent(api, eventId, (e) => e.deliveries[0]?.status === 'delivered');
  t.equal(Buffer.from(event.bodyBase64, 'base64').toString(), '{"kept":1}', 'readable, body included');
  const again = await api.manage('POST', api.tenantPath(`/events/${eventId}/redeliver`));
  t.equal(again.status, 202, 'redelivered while held');
  await receiver.waitFor((rs) => rs.filter((r) => r.body.toString() === '{"kept":1}').length >= 2, 30_000, 'the redelivery');

  if (TEST_BACKEND === 'kafka') await dropAllRecords(backends.topic);
  let answer = await api.manage('GET', api.tenantPath(`/events/${eventId}`));
  for (const until = Date.now() + 90_000; answer.status === 200 && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 500));
    answer = await api.manage('GET', api.tenantPath(`/events/${eventId}`));
  }
  t.equal(answer.status, 404, 'past retention: 404');
  t.equal(answer.body.error.code, 'not_found');
  t.match(answer.body.error.message, /expired/, answer.body.error.message);
  t.notOk('bodyBase64' in answer.body, 'no half-empty record');
  const redeliver = await api.manage('POST', api.tenantPath(`/events/${eventId}/redeliver`));
  t.equal(redeliver.status, 404, 'redeliver: 404 too');
  t.match(redeliver.body.error, { code: 'not_found', message: /expired/ });
});

// The embedded log has no topic (its sweep is what the test above waits for).
if (TEST_BACKEND === 'kafka') t.test('the Kafka topic is made with retention.ms from retention.hours; an existing topic that keeps less is reported', async (t) => {
  t.equal(await topicSetting(backends.topic, 'retention.ms'), String(RETENTION_HOURS * 3_600_000), 'made by the node with 18,000 ms');
  t.equal(await topicSetting(backends.topic, 'segment.ms'), '60000', 'segments of a minute (a tenth of the retention, at least a minute): the broker deletes whole segments');
  const config = loadConfig({}, backendConfig(backends, { retention: { hours: 1 } }));
  const report = await ensureTopic(config);
  t.match(report, new RegExp(`Kafka topic ${backends.topic} keeps records for 0\\.005 h .*less than retention\\.hours \\(1 h\\).*retention\\.ms=3600000`), 'a node wanting 1 h says what to change');
  await setTopicSetting(backends.topic, 'retention.ms', '3600000');
  t.equal(await ensureTopic(config), null, 'long enough: nothing to report');
});
