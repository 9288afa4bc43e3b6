import t from 'tap';
import { connectDatabase } from '../../src/storage/db.js';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, signInWithKey, startConsoleNode } from '../helpers/console-e2e.js';
import { sleep, waitForEvent } from '../helpers/delivery.js';
import { startReceiver } from '../helpers/receiver.js';

declare const document: any; // in page.evaluate callbacks (no DOM lib here)

/** Missed events: a replay hands them over 100 at a time (src/jobs/redelivery-job-runner.ts), so three batches. */
const MISSED = 250;

/**
 * Issue 26's Cancel, clicked: a replay of 250 missed events (one partition
 * key, so one lane, in log order) is cancelled while it hands over its second
 * batch of 100. To make that deterministic rather than a race, the test holds
 * a row lock on the last event row (in the order it locks them) of that batch:
 * the job's "mark pending" step waits on it after the batch's redelivery
 * requests are written. The owner clicks Cancel while the job waits; the
 * lock is released once the API says cancelled. Then: the panel says how many
 * were handed over (200) and how many were not sent (50), the job is
 * cancelled in the API, the receiver gets exactly those 200, once each and in
 * order, and none of the other 50, which stay blocked; the Activity tab names
 * who cancelled.
 */
t.test('an owner cancels a running replay from the console: the batches handed over are delivered once, nothing after', async (t) => {
  const { backends, creds, base, api, T } = await startConsoleNode(t, {
    delivery: {
      allowNetworks: ['127.0.0.0/8'], allowLoopbackInSingleNode: false,
      retry: { scheduleSeconds: [1], horizonSeconds: 3600, holdInMemoryMs: 1000 },
      // Three seconds between warning and disabling: a retry delayed past both thresholds on a loaded
      // box would disable the target without ever warning (no target.warned in the Activity feed).
      disableAfterFailingSeconds: 4, warnAfterFailingSeconds: 1, healthFlushMs: 100,
    },
  });
  const since = new Date(Date.now() - 1_000).toISOString();
  const receiver = await startReceiver(t);
  let failing = true;
  /** The `n` of each event the receiver acknowledged, in arrival order. */
  const acknowledged: number[] = [];
  receiver.responder = (req, res) => {
    if (failing) {
      res.statusCode = 503;
      return void res.end('down');
    }
    acknowledged.push((JSON.parse(req.body.toString('utf8')) as { n: number }).n);
    res.end('ok');
  };
  await api.wire('orders', 'warehouse', `${receiver.url}/hook`);
  const post = async (n: number) => (await api.postEvent('orders', JSON.stringify({ n }), { 'x-service-partition-key': 'k' })).body.eventId as string;
  const dryRun = async () => (await api.manage('POST', api.tenantPath('/targets/warehouse/replay'), { since, dryRun: true })).body.count as number;

  // Event 0 fails until the target is disabled (4 s); events 1… are blocked at once.
  const ids = [await post(0)];
  for (let i = 0; i < 100; i++) {
    const h = (await api.manage('GET', api.tenantPath('/target-health'))).body.items.find((x: { target: string }) => x.target === 'warehouse');
    if (h?.state === 'disabled') break;
    await sleep(200);
  }
  for (let n = 1; n < MISSED; n++) ids.push(await post(n));
  for (let i = 0; i < 100 && (await dryRun()) !== MISSED; i++) await sleep(200);
  t.equal(await dryRun(), MISSED, `the target missed ${MISSED} deliveries`);

  // The second batch is events 100-199 in log order; its "mark pending" locks their rows in
  // (received_at, event_id) order, so a lock on the last of those stops it after its requests are written.
  const sql = connectDatabase(backends.databaseUrl, 2);
  t.teardown(() => sql.end());
  const [held] = await sql<{ eventId: string }[]>`
    SELECT event_id AS "eventId" FROM (
      SELECT received_at, event_id FROM event_log WHERE queue_name = 'orders' ORDER BY log_partition, log_offset OFFSET 100 LIMIT 100) b
    ORDER BY received_at DESC, event_id DESC LIMIT 1`;
  let release = () => {};
  const released = new Promise<void>((resolve) => { release = resolve; });
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => { locked = resolve; });
  const holder = sql.begin(async (tx) => {
    await tx`SELECT 1 FROM event_log WHERE event_id = ${held!.eventId} FOR UPDATE`;
    locked();
    await released;
  });
  t.teardown(async () => { release(); await holder; });
  await isLocked;

  const browser = await startBrowser(t);
  const tab = await ConsoleTab.open(browser, base, 'owner');
  await signInWithKey(tab, creds.licensePublicId, creds.buildKey, T);
  await tab.go(`#/w/${T}/targets`);
  await tab.page.waitForSelector('[data-testid="disabled-banner"]', { timeout: 10_000 });
  failing = false;
  await tab.click('Re-enable');
  await tab.page.waitForSelector('[data-testid="replay-warehouse"]');
  await tab.click('Replay', '[data-testid="replay-warehouse"]');

  // The first batch is handed over and counted; the job waits in the second.
  const progress = () => tab.page.$eval('[data-testid="replay-progress"]', (el: any) => (el.textContent as string).replace(/\s+/g, ' ').trim());
  await tab.page.waitForFunction((s: string) => document.querySelector('[data-testid="replay-progress"]')?.textContent?.includes(s), { timeout: 20_000 }, `100 of ${MISSED} handed`);
  t.match(await progress(), `running 100 of ${MISSED} handed to delivery again`);
  t.ok(await tab.page.$('[data-testid="replay-cancel"]:not([disabled])'), 'Cancel is offered while the job runs');
  await tab.shoot('replay-running');
  const jobId = (await api.manage('GET', api.tenantPath('/activity?kind=replay.started'))).body.items[0].subject as string;

  // Cancel, clicked (not through tab.click: its answer waits for the held batch, and the page is not idle until then).
  await tab.page.click('[data-testid="replay-cancel"]');
  await tab.page.waitForFunction(() => document.querySelector('[data-testid="replay-progress"]')?.textContent?.includes('cancelling'), { timeout: 10_000 });
  t.match(await progress(), 'cancelling: the batch being handed over finishes first', 'the panel says the cancel is under way');
  const during = (await api.manage('GET', api.tenantPath(`/redelivery-jobs/${jobId}`))).body;
  t.match(during, { status: 'cancelled', done: 100 }, 'the API says cancelled at once');
  await tab.shoot('replay-cancelling');
  release();
  await holder;

  // The cancel's answer: the batch that was being handed over finished and is counted; the rest not sent.
  await tab.page.waitForFunction(() => document.querySelector('[data-testid="replay-progress"]')?.textContent?.includes('not sent'), { timeout: 10_000 });
  t.equal(await progress(), `cancelled 200 of ${MISSED} handed to delivery again; the other ${MISSED - 200} were not sent (replay again to send them)`);
  t.equal(await tab.page.$('[data-testid="replay-cancel"]'), null, 'no Cancel once cancelled');
  t.equal(await tab.allDisabled('Replay'), false, 'Replay is offered again');
  await tab.shoot('replay-cancelled');
  t.match((await api.manage('GET', api.tenantPath(`/redelivery-jobs/${jobId}`))).body, { kind: 'replay', status: 'cancelled', total: MISSED, done: 200, failed: 0 });

  // The receiver gets the 200 handed over, once each, in order, and nothing after.
  await receiver.waitFor(() => acknowledged.length >= 200, 30_000, '200 replayed deliveries');
  await sleep(2_000); // anything more (a third batch, a duplicate) would arrive by now
  t.same(acknowledged, Array.from({ length: 200 }, (_, n) => n), 'events 0-199, once each, in order; none of 200-249');
  await waitForEvent(api, ids[199]!, (e) => e.deliveries[0]?.status === 'delivered');
  t.equal((await api.manage('GET', api.tenantPath(`/events/${ids[200]}`))).body.deliveries[0].status, 'blocked', 'an event of the third batch is still blocked');
  t.equal(await dryRun(), MISSED - 200, 'a new replay would send the 50 not sent');

  // The Activity tab: who cancelled, then the job's end with its count.
  await tab.go(`#/w/${T}/activity`);
  await tab.page.waitForSelector('tr[data-kind="replay.finished"]', { timeout: 10_000 });
  const rows = await tab.page.$$eval('[data-testid="activity"] tr[data-kind]', (trs: any[]) =>
    trs.map((r) => [r.getAttribute('data-kind') as string, (r.innerText as string).replace(/\s+/g, ' ')]));
  t.same(rows.map((r) => r[0]), ['replay.finished', 'replay.cancelled', 'replay.started', 'target.enabled', 'target.disabled', 'target.warned']);
  t.match(rows[0]![1], new RegExp(`Replay finished ${jobId} the job cancelled: 200 handed to delivery again`));
  t.match(rows[1]![1], new RegExp(`Replay cancelled ${jobId} key_\\S+ stops before its next batch`), 'who cancelled: the signed-in key');
  await tab.shoot('activity');

  checkTab(t, tab, [{ path: '/console/api/session', status: 401 }]);
});
