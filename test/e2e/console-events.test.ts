import t from 'tap';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, eventually, signInWithKey, startConsoleNode } from '../helpers/console-e2e.js';
import { startReceiver } from '../helpers/receiver.js';
import { arrives } from '../helpers/waas.js';

declare const document: any; // in page.evaluate callbacks (no DOM lib here)

// An owner finds a failed delivery in the console (real browser) through the
// event filters, reads the event page, fixes the target's URL in its form,
// counts the failed deliveries, confirms the bulk redelivery and sees them
// delivered.
t.test('an owner finds a failed delivery, fixes the target and redelivers it in bulk', async (t) => {
  const { creds, base, api, T } = await startConsoleNode(t);
  const good = await startReceiver(t);
  const bad = await startReceiver(t);
  bad.responder = (_req, res) => {
    res.statusCode = 400;
    res.end('no');
  };
  const browser = await startBrowser(t);
  const tab = await ConsoleTab.open(browser, base, 'owner');
  await signInWithKey(tab, creds.licensePublicId, creds.buildKey, T);

  await api.wire('orders', 'warehouse', `${bad.url}/hook`);

  // An event that fails for good (400 is not retried), found through the filters.
  const posted = await api.postEvent('orders', JSON.stringify({ order: 42, items: ['a'] }), { 'x-service-partition-key': 'c-1', 'x-service-event-type': 'order.created' });
  t.equal(posted.status, 202);
  const eventId = posted.body.eventId as string;
  await arrives(bad, eventId);
  const other = await api.postEvent('orders', '{"order":43}', { 'x-service-partition-key': 'c-2', 'x-service-event-type': 'order.updated' });
  await arrives(bad, other.body.eventId);
  await eventually(tab, `#/w/${T}/queues/orders/events?status=failed&target=warehouse&eventType=order.created`, eventId);
  const listed = await tab.text();
  t.notMatch(listed, other.body.eventId, 'the event type filter leaves the other event out');
  t.match(listed, 'failed', 'the delivery shows failed');
  await tab.shoot('events-filtered');
  await tab.click(eventId);
  await tab.waitText('Deliveries');
  const page = await tab.text();
  t.match(page, 'order.created', 'the event page shows the event type');
  t.match(page, 'c-1', 'and the partition key');
  t.match(page, '400', 'the attempt shows the receiver status');
  t.match(page, '"order": 42', 'the body preview shows the JSON, pretty-printed');
  await tab.shoot('event');

  // Fix the target's URL, count the failed deliveries, confirm, and see them delivered.
  await tab.go(`#/w/${T}/targets/warehouse`);
  await tab.fill('URL', `${good.url}/hook`);
  await tab.click('Save target');
  await tab.waitText(`${good.url}/hook`);
  await tab.go(`#/w/${T}/queues/orders/events?target=warehouse`);
  await tab.click('Count failed deliveries');
  await tab.waitText('2 failed deliveries of warehouse');
  await tab.shoot('bulk-count');
  await tab.click('Redeliver failed (2)');
  await tab.waitText('2 of 2 redelivered', 20_000);
  await arrives(good, eventId);
  await arrives(good, other.body.eventId);
  t.equal(good.requests.find((r) => r.headers['x-service-event-id'] === eventId)?.body.toString(), JSON.stringify({ order: 42, items: ['a'] }), 'the same event reached the fixed URL');
  await tab.shoot('bulk-done');
  await eventually(tab, `#/w/${T}/queues/orders/events?status=delivered`, eventId);

  checkTab(t, tab, [{ path: '/console/api/session', status: 401 }]);
});
