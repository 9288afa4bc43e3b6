import t from 'tap';
import { LicenseRepo } from '../../src/storage/license-repo.js';
import { connectDatabase } from '../../src/storage/db.js';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, signInWithKey, startConsoleNode } from '../helpers/console-e2e.js';
import { sleep, waitForEvent } from '../helpers/delivery.js';
import { startReceiver } from '../helpers/receiver.js';

declare const document: any, location: any, window: any; // in page.evaluate callbacks (no DOM lib here)

/**
 * Issue 26 in a real browser: a new workspace made from the License home; a
 * failing target seen failing, then disabled (thresholds of seconds here),
 * re-enabled and replayed from the Targets page, the receiver getting exactly
 * what it missed, once each, in order per key; the Activity tab telling it all.
 * A second tab keeps the overview open all along: its list of unhealthy
 * targets follows the failing one (failing, warning, disabled) without a
 * reload, never lists the healthy one beside it, links to the Targets page,
 * and empties once the target recovers.
 */
t.test('an owner sees a target fail, re-enables it and replays what it missed, from the console', async (t) => {
  const { backends, creds, base, api, T } = await startConsoleNode(t, {
    delivery: {
      allowNetworks: ['127.0.0.0/8'], allowLoopbackInSingleNode: false,
      retry: { scheduleSeconds: [1], horizonSeconds: 3600, holdInMemoryMs: 1000 },
      // Each state lasts 5 s: longer than the console's 3 s health poll, so every tab sees each one.
      disableAfterFailingSeconds: 10, warnAfterFailingSeconds: 5, healthFlushMs: 200,
    },
  });
  // A license-wide Build key: it may create workspaces.
  const sql = connectDatabase(backends.databaseUrl, 1);
  const [lic] = await sql<{ id: string }[]>`SELECT id::text FROM licenses WHERE public_id = ${creds.licensePublicId}`;
  const wide = await new LicenseRepo(sql).createKey({ licenseId: lic!.id, workspaceId: null, profile: 'build', name: 'license-wide build key' });
  await sql.end();

  const browser = await startBrowser(t);
  const tab = await ConsoleTab.open(browser, base, 'owner');
  await signInWithKey(tab, creds.licensePublicId, wide.wire, T);

  // A new workspace from the License home: the console opens it, empty.
  await tab.fill('New workspace', 'Staging');
  await tab.shoot('new-workspace-form');
  await tab.click('Create workspace');
  await tab.page.waitForFunction(() => /#\/w\/ten_[^/]+\/overview$/.test(location.hash));
  const fresh = await tab.page.evaluate(() => location.hash.split('/')[2] as string);
  // (The overview page is issue 26's other half; whichever page the workspace opens on, it names the workspace.)
  await tab.page.waitForFunction(() => document.querySelector('h1')?.textContent?.includes('Staging'));
  t.equal((await api.request('GET', `/v1/tenants/${fresh}`, { headers: { 'x-api-key': wide.wire, 'x-license-publicid': creds.licensePublicId } })).body.name, 'Staging', 'made by the form');
  await tab.shoot('new-workspace-landing');

  // A receiver that acknowledges the first events, then fails.
  const receiver = await startReceiver(t);
  let failing = false;
  const acknowledged: Array<{ key: string; n: number }> = [];
  receiver.responder = (req, res) => {
    if (failing) {
      res.statusCode = 503;
      return void res.end('down');
    }
    acknowledged.push(JSON.parse(req.body.toString('utf8')));
    res.end('ok');
  };
  await api.wire('orders', 'warehouse', `${receiver.url}/hook`);
  // A second target of the same queue whose receiver always acknowledges: it must never be listed as unhealthy.
  const ledger = await startReceiver(t);
  await api.wire('orders', 'ledger', `${ledger.url}/hook`);
  const warehouse = (e: { deliveries: Array<{ target: string; status: string }> }) => e.deliveries.find((d) => d.target === 'warehouse')?.status;
  const post = async (key: string, n: number) => (await api.postEvent('orders', JSON.stringify({ key, n }), { 'x-service-partition-key': key })).body.eventId as string;
  for (const id of [await post('a', 1), await post('b', 1)]) await waitForEvent(api, id, (e) => warehouse(e) === 'delivered');

  // The overview, in a tab of its own (same browser, same session), open until the end: it is never reloaded
  // (a mark left on its window stays), and a recorder notes each list it shows, as "<target>:<state>,…".
  // Only the tab in front renders at full speed: each is brought to front before it is driven (the other
  // keeps polling, its timers slowed to once a second, which the 3 s health poll and 5 s states allow).
  const overview = await ConsoleTab.open(browser, base, 'overview');
  await overview.go(`#/w/${T}/overview`);
  await overview.page.waitForSelector('[data-testid="targets-healthy"]', { timeout: 10_000 });
  t.match(await overview.page.$eval('[data-testid="unhealthy-targets"]', (el: any) => el.innerText as string), /Every target is delivering/);
  await overview.shoot('overview-healthy');
  await overview.page.evaluate(() => {
    const w = window;
    w.notReloaded = true;
    w.seen = [] as string[];
    setInterval(() => {
      const rows = [...document.querySelectorAll('[data-testid="unhealthy-targets"] tr[data-unhealthy]')]
        .map((r: any) => `${r.getAttribute('data-unhealthy')}:${r.getAttribute('data-state')}`);
      const now = rows.length > 0 ? rows.join(',') : document.querySelector('[data-testid="targets-healthy"]') ? 'healthy' : null;
      if (now !== null && w.seen[w.seen.length - 1] !== now) w.seen.push(now);
    }, 50);
  });
  const unhealthyRow = (state: string) => overview.page.waitForSelector(`tr[data-unhealthy="warehouse"][data-state="${state}"]`, { timeout: 20_000 });
  const rowText = () => overview.page.$eval('tr[data-unhealthy="warehouse"]', (el: any) => el.innerText as string);

  await tab.page.bringToFront();
  await tab.go(`#/w/${T}/targets`);
  await tab.page.waitForSelector('tr[data-target="warehouse"][data-state="active"]', { timeout: 10_000 });
  failing = true;
  const missed: string[] = [];
  for (const n of [2, 3]) for (const key of ['a', 'b']) missed.push(await post(key, n));
  // The page reads health every few seconds: failing, then disabled, without a reload.
  await tab.page.waitForSelector('tr[data-target="warehouse"][data-state="failing"]', { timeout: 20_000 });
  t.match(await tab.page.$eval('tr[data-target="warehouse"]', (el: any) => el.innerText as string), /503/, 'the last error is shown');
  await tab.shoot('target-failing');
  // Meanwhile the overview lists it, with its last error, and only it.
  await overview.page.bringToFront();
  await unhealthyRow('failing');
  t.match(await rowText(), /warehouse\s+failing[\s\S]*503/, 'the overview lists the failing target with its last error');
  await overview.shoot('overview-failing');
  await unhealthyRow('warning');
  t.match(await rowText(), /warehouse\s+warning[\s\S]*503/, 'then as warning');
  await overview.shoot('overview-warning');
  await unhealthyRow('disabled');
  t.match(await rowText(), /warehouse\s+disabled[\s\S]*503/, 'then as disabled');
  await overview.shoot('overview-disabled');
  t.equal(await overview.page.$('tr[data-unhealthy="ledger"]'), null, 'the healthy target is not listed');
  await tab.page.bringToFront();
  await tab.page.waitForSelector('[data-testid="disabled-banner"]', { timeout: 30_000 });
  await tab.page.waitForSelector('tr[data-target="warehouse"][data-state="disabled"]', { timeout: 10_000 });
  t.match(await tab.text(), /Target warehouse is disabled because every delivery attempt has failed since/);
  await tab.shoot('target-disabled');
  missed.push(await post('a', 4)); // blocked at once
  for (const id of missed) await waitForEvent(api, id, (e) => ['blocked', 'failed'].includes(warehouse(e) ?? ''));

  // The overview's link opens the Targets page (a route change: the tab is the same document).
  await overview.page.bringToFront();
  await overview.click('warehouse', '[data-testid="unhealthy-targets"]');
  await overview.page.waitForSelector('tr[data-target="warehouse"][data-state="disabled"]', { timeout: 10_000 });
  t.match(await overview.page.evaluate(() => location.hash as string), new RegExp(`^#/w/${T}/targets$`), 'the link opens the Targets page');
  await overview.click('Overview');
  await unhealthyRow('disabled');
  await tab.page.bringToFront();

  // Back: re-enable, then replay from the panel that opens (since: a little before the trouble began).
  failing = false;
  await tab.click('Re-enable');
  await tab.page.waitForSelector('[data-testid="replay-warehouse"]');
  t.equal((await api.manage('GET', `/v1/tenants/${T}/targets/warehouse`)).body.disabled, false, 're-enabled');
  await tab.click('Replay', '[data-testid="replay-warehouse"]');
  await tab.page.waitForFunction(() => document.querySelector('[data-testid="replay-progress"]')?.textContent?.includes('done'), { timeout: 20_000 });
  t.match(await tab.page.$eval('[data-testid="replay-progress"]', (el: any) => el.textContent as string), `${missed.length} of ${missed.length} handed to delivery again`);
  await tab.shoot('replay-done');
  for (const id of missed) await waitForEvent(api, id, (e) => warehouse(e) === 'delivered');
  await sleep(1_500); // anything sent twice would arrive by now
  t.same(acknowledged.filter((m) => m.key === 'a').map((m) => m.n), [1, 2, 3, 4], 'key a: each once, in order');
  t.same(acknowledged.filter((m) => m.key === 'b').map((m) => m.n), [1, 2, 3], 'key b: each once, in order');
  t.equal(acknowledged.length, 7, 'nothing it had acknowledged was sent again');
  await tab.page.waitForSelector('tr[data-target="warehouse"][data-state="active"]', { timeout: 20_000 });

  // Recovered: the overview (still the same document) says again that every target is delivering.
  await overview.page.bringToFront();
  await overview.page.waitForSelector('[data-testid="targets-healthy"]', { timeout: 10_000 });
  await overview.shoot('overview-recovered');
  t.equal(await overview.page.evaluate(() => window.notReloaded === true), true, 'the overview was never reloaded');
  const seen = await overview.page.evaluate(() => window.seen as string[]);
  t.comment(`the overview showed: ${seen.join(' → ')}`);
  t.same(seen, ['healthy', 'warehouse:failing', 'warehouse:warning', 'warehouse:disabled', 'healthy'],
    'the overview went from healthy to failing, warning and disabled, then healthy again, never listing ledger');
  t.equal(ledger.requests.length, 7, 'meanwhile ledger got each of the 7 events, once');

  // The Activity tab tells the story, newest first.
  await tab.page.bringToFront();
  await tab.go(`#/w/${T}/activity`);
  await tab.page.waitForSelector('tr[data-kind="replay.finished"]', { timeout: 10_000 });
  const kinds = await tab.page.$$eval('[data-testid="activity"] tr[data-kind]', (rows: any[]) => rows.map((r) => r.getAttribute('data-kind') as string));
  t.same(kinds, ['replay.finished', 'replay.started', 'target.enabled', 'target.disabled', 'target.warned'], 'warned, disabled by delivery, enabled and replayed by the owner');
  t.match(await tab.text(), /delivery \(automatic\)/);
  await tab.shoot('activity');

  checkTab(t, tab, [{ path: '/console/api/session', status: 401 }]);
  checkTab(t, overview, []);
});
