import t from 'tap';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, eventually, signInWithKey, startConsoleNode } from '../helpers/console-e2e.js';
import { bootstrapLicense } from '../helpers/console-e2e.js';
import { startReceiver } from '../helpers/receiver.js';
import { arrives } from '../helpers/waas.js';

declare const document: any; // in page.evaluate callbacks (no DOM lib here)

// The producer → partner story in two browser contexts: the producer publishes
// a stream, packs it, invites; the partner accepts onto a new free account,
// subscribes and routes its receiving queue to its own receiver; the producer
// activates a group key; an event posted with curl arrives; blocking the
// package pauses the partner's subscription, unblocking resumes it; the
// metrics chart counts the delivery.
t.test('a producer and a partner wire a stream together in the console', async (t) => {
  const { backends, creds, base, api, T } = await startConsoleNode(t, { waas: { metricsFlushMs: 100, gateViewTtlSeconds: 3600 } });
  const receiver = await startReceiver(t);
  const browser = await startBrowser(t);

  // Producer: stream, package, invitation.
  const producer = await ConsoleTab.open(await browser.createBrowserContext(), base, 'producer');
  await signInWithKey(producer, creds.licensePublicId, creds.buildKey, T);
  await producer.go(`#/w/${T}/producer/streams`);
  await producer.waitText('Apply a stream');
  await producer.fill('Name', 'orders');
  await producer.fill('Description', 'Orders as they happen');
  await producer.fill('Event types', 'order.created, order.paid');
  await producer.click('Apply stream');
  await producer.page.waitForSelector('tr[data-stream="orders"]');
  t.match(await producer.text(), 'Published');
  await producer.shoot('producer-streams');
  const cat = ((await api.manage('GET', `/waas/producer/${T}/catalog`)).body.data as Array<{ publicId: string }>)[0]!.publicId;

  await producer.go(`#/w/${T}/producer/packages`);
  await producer.fill('Name', 'Commerce');
  await producer.click('Create package');
  await producer.page.waitForSelector('[data-package="commerce"]');
  await producer.click('Add', '[data-package="commerce"]');
  await producer.page.waitForFunction(() => document.querySelector('[data-package="commerce"]')?.textContent?.includes('orders'));
  const pkg = ((await api.manage('GET', `/waas/producer/${T}/packages`)).body.data as Array<{ publicId: string; streams: string[] }>)[0]!;
  t.same(pkg.streams, [cat], 'the package holds the stream');
  await producer.shoot('producer-packages');

  await producer.go(`#/w/${T}/producer/integrations`);
  await producer.fill('Partner e-mail', 'ops@partner.test');
  await producer.click('Invite');
  await producer.waitText('Invite link');
  const invite = await producer.page.$eval('[data-testid="secret-value"]', (el) => el.textContent ?? '');
  t.match(invite, `${base}/console/#/accept/int_`, 'the invite link opens the console accept page');
  const integrationId = /accept\/(int_[A-Za-z0-9_-]+)/.exec(invite)![1]!;
  await producer.shoot('producer-invite');
  await producer.click('Done');
  t.notMatch(await producer.text(), invite, 'the link is shown once');

  // Partner, in a browser context of its own: accept onto a new free account.
  const partner = await ConsoleTab.open(await browser.createBrowserContext(), base, 'partner');
  await partner.page.goto(invite, { waitUntil: 'networkidle0' });
  await partner.settled();
  await partner.waitText('Accept invitation');
  await partner.shoot('partner-accept');
  await partner.click('Accept invitation');
  await partner.waitText('Invitation accepted');
  t.notMatch(partner.page.url(), 'token=', 'the spent token leaves the address bar');
  await partner.shoot('partner-accepted');
  await partner.click('Go to your subscriptions');
  await partner.waitText('Streams you can subscribe to');
  const recv = new URL(partner.page.url()).hash.split('/')[2]!;
  t.match(recv, /^ten_/, 'the partner works in its receiving workspace');
  await partner.click('Subscribe', 'tr[data-stream="orders"]');
  await partner.page.waitForSelector(`tr[data-subscription="${cat}"]`);
  t.equal(await partner.page.$eval(`tr[data-subscription="${cat}"] .badge`, (el) => el.textContent), 'live', 'the subscription is live');
  const partnerPage = new URL(partner.page.url()).hash;

  // The partner's own target, and the route from its receiving queue.
  await partner.go(`#/w/${recv}/targets/new`);
  await partner.fill('Name', 'mine');
  await partner.fill('URL', `${receiver.url}/partner`);
  await partner.click('Save target');
  await partner.page.waitForSelector('tr[data-target="mine"]');
  await partner.go(partnerPage);
  await partner.click('Route', `tr[data-subscription="${cat}"]`);
  await partner.page.waitForFunction((c: string) => document.querySelector(`tr[data-subscription="${c}"]`)?.textContent?.includes('mine'), {}, cat);
  await partner.shoot('partner-subscriptions');

  // The partner home lists the integration from the server: no ids in the address.
  await partner.go(`#/w/${recv}/partner`);
  const received = `tr[data-integration="${integrationId}"]`;
  await partner.page.waitForSelector(received);
  t.same(await partner.page.$$eval(`${received} td`, (tds: any[]) => tds.map((td) => td.textContent.trim())), [integrationId, T, 'Active', '1'],
    'the partner home lists the integration, its producer and its one subscription');
  await partner.shoot('partner-home');
  await partner.click(integrationId, received);
  await partner.page.waitForSelector(`tr[data-subscription="${cat}"]`);
  await partner.go(`#/w/${recv}/partner/${integrationId}`);
  await partner.page.waitForFunction(() => document.querySelector('tr[data-stream="orders"]')?.textContent?.includes('subscribed'));
  t.pass("without the producer's id in the address, the page finds it and lists its streams");

  // Producer: activate the group key; an event posted with curl reaches the partner.
  await producer.go(`#/w/${T}/producer/activations`);
  await producer.fill('Group key', 'acme');
  await producer.click('Activate');
  const activationsText = () => producer.page.$eval('[data-testid="activations"] tbody', (el) => el.textContent ?? '').catch(() => '');
  await producer.page.waitForFunction(() => document.querySelector('[data-testid="activations"] tbody')?.textContent?.includes('acme'));
  await producer.page.reload({ waitUntil: 'networkidle0' });
  await producer.settled();
  await producer.page.waitForSelector('[data-testid="activations"]');
  t.match(await activationsText(), /act_[A-Za-z0-9_-]+acmeops@partner\.test int_[A-Za-z0-9_-]+Active/, 'after a reload the activation is listed from the server');
  await producer.shoot('producer-activations');
  const post = async (n: number) => {
    const res = await api.postEvent('orders', JSON.stringify({ n }), { 'x-service-group-key': 'acme', 'x-service-partition-key': 'p', 'x-service-event-type': 'order.created' });
    t.equal(res.status, 202);
    return res.body.eventId as string;
  };
  await arrives(receiver, await post(1), 'the first event at the partner');

  // Blocking the package pauses the partner's subscription; unblocking resumes it.
  await producer.go(`#/w/${T}/producer/blocks`);
  await producer.click('Block', `tr[data-block="packages/${pkg.publicId}"]`);
  await producer.page.waitForFunction((p: string) => document.querySelector(`tr[data-block="packages/${p}"]`)?.textContent?.includes('orders: paused'), {}, pkg.publicId);
  await producer.page.reload({ waitUntil: 'networkidle0' });
  await producer.settled();
  const blockState = (row: string) => producer.page.waitForFunction((r: string) => {
    const badge = document.querySelector(`tr[data-block="${r}"] td:nth-child(2) .badge`);
    return badge ? badge.textContent : false;
  }, {}, row).then((h) => h.jsonValue());
  t.equal(await blockState(`packages/${pkg.publicId}`), 'blocked', 'after a reload the package block shows as stored');
  t.equal(await blockState(`streams/${cat}`), 'unblocked', 'the stream itself is not blocked');
  t.match(await producer.page.$eval(`tr[data-block="streams/${cat}"]`, (el) => el.textContent ?? ''), 'orders: paused', 'its subscription is paused by the package block');
  await producer.shoot('producer-blocks');
  await eventually(partner, partnerPage, 'paused', `tr[data-subscription="${cat}"] .badge`);
  await partner.shoot('partner-paused');
  // Routing happens when delivery reads the event, so an event still unread when
  // the block is lifted goes to the partner too: wait until it was routed (it
  // reaches the producer's own target, routed in the same step) before unblocking.
  const own = await startReceiver(t);
  for (const res of [
    await api.manage('PUT', `/v1/tenants/${T}/targets/audit`, { url: `${own.url}/audit` }),
    await api.manage('PUT', `/v1/tenants/${T}/queues/orders/targets/audit`),
  ]) t.ok(res.status < 300, `the producer routes its stream's queue to a target of its own (${res.status})`);
  const held = await post(2);
  await arrives(own, held, 'the event posted while paused, at the producer\'s own target');
  await producer.click('Unblock', `tr[data-block="packages/${pkg.publicId}"]`);
  await producer.page.waitForFunction((p: string) => document.querySelector(`tr[data-block="packages/${p}"]`)?.textContent?.includes('orders: live'), {}, pkg.publicId);
  await eventually(partner, partnerPage, 'live', `tr[data-subscription="${cat}"] .badge`);
  const after = await post(3);
  await arrives(receiver, after, 'an event after the unblock');
  t.notOk(receiver.eventIds().includes(held), 'nothing posted while paused was routed to the partner');

  // The metrics chart counts the delivered events.
  await eventually(producer, `#/w/${T}/producer/metrics`, '2 delivered');
  t.ok(await producer.page.$('.chart-box canvas'), 'the chart is drawn');
  await producer.shoot('producer-metrics');

  // A second partner accepts onto the account it already has: it signs in on the accept page first.
  const other = await bootstrapLicense(backends.databaseUrl, 'ops@second.test');
  await producer.go(`#/w/${T}/producer/integrations`);
  await producer.fill('Partner e-mail', 'ops@second.test');
  await producer.click('Invite');
  await producer.waitText('Invite link');
  const invite2 = await producer.page.$eval('[data-testid="secret-value"]', (el) => el.textContent ?? '');
  const second = await ConsoleTab.open(await browser.createBrowserContext(), base, 'second-partner');
  await second.page.goto(invite2, { waitUntil: 'networkidle0' });
  await second.settled();
  await second.page.click('summary');
  await second.fill('License ID', other.licensePublicId);
  await second.fill('API key', other.buildKey);
  await second.click('Sign in');
  await second.waitText('Onto your account');
  await second.shoot('accept-existing');
  await second.click('Accept invitation');
  await second.waitText('Invitation accepted');
  t.match(await second.text(), other.tenantPublicId, 'the events arrive in the workspace it already had');
  const listed = ((await api.manage('GET', `/waas/producer/${T}/integrations`)).body.data as Array<{ invitedEmail: string; status: string; receivingTenantPublicId: string }>)
    .find((i) => i.invitedEmail === 'ops@second.test');
  t.same([listed?.status, listed?.receivingTenantPublicId], ['Active', other.tenantPublicId], 'the producer sees it active there');

  checkTab(t, producer, [{ path: '/console/api/session', status: 401 }]);
  checkTab(t, partner, [{ path: '/console/api/session', status: 401 }]);
  checkTab(t, second, [{ path: '/console/api/session', status: 401 }]);
});
