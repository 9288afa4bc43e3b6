import t from 'tap';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, eventually, signInWithKey, startConsoleNode } from '../helpers/console-e2e.js';
import { startReceiver } from '../helpers/receiver.js';
import { arrives } from '../helpers/waas.js';

declare const document: any; // in page.evaluate callbacks (no DOM lib here)

// An owner runs a workspace from the console in a real browser: queues (a
// header collision refused in the form, archive and restore), targets (a
// disabled one re-enabled), routes and signing keys.
t.test('an owner runs a workspace from the console', async (t) => {
  // A key encryption key, so the console can make an ed25519 signing key too.
  const { creds, base, api, T } = await startConsoleNode(t, { signing: { keyEncryptionKey: '11'.repeat(32) } });
  const receiver = await startReceiver(t);
  const browser = await startBrowser(t);
  const tab = await ConsoleTab.open(browser, base, 'owner');
  await signInWithKey(tab, creds.licensePublicId, creds.buildKey, T);

  // A queue made with the form; a mapped header the reference forbids is refused next to its field.
  await tab.go(`#/w/${T}/queues`);
  await tab.waitText('No queues yet.');
  await tab.click('New queue');
  await tab.fill('Name', 'orders');
  await tab.click('Add mapped header');
  await tab.fillId('mh-0-name', 'X-Tenant');
  await tab.fillId('mh-0-as', 'X-Service-Tenant');
  await tab.click('Save queue');
  await tab.waitText("X-Service-* is the service's own vocabulary");
  t.ok(await tab.page.$('#mh-0-as-error'), 'the collision is shown next to the field');
  await tab.shoot('queue-form-refused');
  await tab.fillId('mh-0-as', 'X-Tenant');
  await tab.click('Save queue');
  await tab.page.waitForSelector('tr[data-queue="orders"]');
  t.match(await tab.text(), 'accepting', 'the new queue is accepting');
  const saved = await api.manage('GET', `/v1/tenants/${T}/queues/orders`);
  t.same(saved.body.mappedHeaders, [{ from: { source: 'header', name: 'X-Tenant' }, as: 'X-Tenant', required: false }], 'with its mapped header');
  await tab.shoot('queues');

  // A target and the route.
  await tab.go(`#/w/${T}/targets`);
  await tab.click('New target');
  await tab.fill('Name', 'warehouse');
  await tab.fill('URL', `${receiver.url}/hook`);
  await tab.shoot('target-form');
  await tab.click('Save target');
  await tab.page.waitForSelector('tr[data-target="warehouse"]');
  await tab.go(`#/w/${T}/routes`);
  await tab.click('Add route');
  await tab.page.waitForFunction(() => document.querySelector('[data-testid="routes"]')?.textContent?.includes('warehouse'));
  t.equal((await api.manage('GET', `/v1/tenants/${T}/queues/orders/targets/warehouse`)).status, 200, 'the route exists');
  await tab.shoot('routes');

  // An inbound source queue: the mode offers a write-only source secret, never shown again.
  await tab.go(`#/w/${T}/queues`);
  await tab.click('New queue');
  await tab.fill('Name', 'github-hooks');
  t.notOk(await tab.page.$('#q-sourceSecret'), 'no source secret field for an API key queue');
  await tab.select('Auth mode', 'github');
  await tab.page.waitForSelector('#q-sourceSecret');
  await tab.fillId('q-sourceSecret', 'gh-console-secret-4711');
  await tab.shoot('queue-form-github');
  await tab.click('Save queue');
  await tab.page.waitForSelector('tr[data-queue="github-hooks"]');
  const hooks = await api.manage('GET', `/v1/tenants/${T}/queues/github-hooks`);
  t.match(hooks.body, { authMode: 'github', sourceSecretSet: true }, 'saved with its secret');
  t.notOk(JSON.stringify(hooks.body).includes('gh-console-secret-4711'), 'the secret is not returned');
  t.notOk((await tab.text()).includes('gh-console-secret-4711'), 'nor shown');

  // Archive: ingress answers 409 queue_archived; Restore from the console.
  await tab.go(`#/w/${T}/queues`);
  await tab.click('Archive', 'tr[data-queue="orders"]');
  await tab.page.waitForFunction(() => document.querySelector('tr[data-queue="orders"]')?.textContent?.includes('archived'));
  const refused = await api.postEvent('orders', '{}');
  t.equal(refused.status, 409);
  t.equal(refused.body.error.code, 'queue_archived', 'an archived queue takes no events');
  await tab.shoot('queue-archived');
  await tab.click('Restore', 'tr[data-queue="orders"]');
  await tab.page.waitForFunction(() => document.querySelector('tr[data-queue="orders"]')?.textContent?.includes('accepting'));
  t.equal((await api.postEvent('orders', '{}')).status, 202, 'the restored queue accepts again');

  // The whole workspace: archived, every queue refuses; the banner restores it.
  await tab.click('Archive workspace');
  await tab.page.waitForSelector('[data-testid="workspace-archived"]');
  t.equal((await api.postEvent('orders', '{}')).body.error?.code, 'queue_archived', 'an archived workspace takes no events');
  t.equal((await api.manage('GET', `/v1/tenants/${T}`)).body.archived, true);
  await tab.shoot('workspace-archived');
  await tab.click('Restore workspace');
  await tab.page.waitForSelector('[data-testid="archive-workspace"]');
  t.equal((await api.postEvent('orders', '{}')).status, 202, 'the restored workspace accepts again');

  // Retention: a workspace keeps its events for less than the service; too long is refused, named.
  await tab.fill('Keep events for (hours)', '2.5');
  await tab.click('Save retention');
  await tab.page.waitForFunction(() => (document.querySelector("#ws-retention") as { value?: string } | null)?.value === '2.5'
    && !document.querySelector('[data-testid="workspace-retention"] button[type="submit"]:not([disabled])'));
  t.equal((await api.manage('GET', `/v1/tenants/${T}`)).body.retentionHours, 2.5, 'saved from the console');
  await tab.fill('Keep events for (hours)', '100000');
  await tab.click('Save retention');
  await tab.page.waitForFunction(() => document.querySelector('[data-testid="workspace-retention"] .error')?.textContent?.includes('retentionHours'));
  t.equal((await api.manage('GET', `/v1/tenants/${T}`)).body.retentionHours, 2.5, 'a longer period than the service keeps is refused');
  await tab.fill('Keep events for (hours)', '');
  await tab.click('Save retention');
  await tab.page.waitForFunction(() => (document.querySelector("#ws-retention") as { value?: string } | null)?.value === ''
    && !document.querySelector('[data-testid="workspace-retention"] .error'));
  t.equal((await api.manage('GET', `/v1/tenants/${T}`)).body.retentionHours, null, "empty: back to the service's");

  // A target disabled by a 410 shows why, and is re-enabled.
  const gone = await startReceiver(t);
  gone.responder = (_req, res) => {
    res.statusCode = 410;
    res.end('gone');
  };
  await api.wire('leaving', 'retired', `${gone.url}/hook`);
  await arrives(gone, (await api.postEvent('leaving', '{}')).body.eventId);
  await eventually(tab, `#/w/${T}/targets`, 'is disabled because');
  await tab.shoot('target-disabled');
  await tab.click('Re-enable');
  await tab.page.waitForFunction(() => !document.body.innerText.includes('is disabled because'));
  t.equal((await api.manage('GET', `/v1/tenants/${T}/targets/retired`)).body.disabled, false, 're-enabled');

  // Signing keys: the secret is shown once; revoke.
  await tab.go(`#/w/${T}/signing-keys`);
  await tab.click('Create signing key');
  await tab.waitText('shown once');
  const shown = await tab.page.$eval('[data-testid="secret-also"]', (el: any) => el.textContent as string);
  t.match(shown, /^whsec_[A-Za-z0-9+/]+=*$/, 'the Standard Webhooks form of the key is shown too');
  const keys = (await api.manage('GET', `/v1/tenants/${T}/signing-keys`)).body.data as Array<{ keyId: string }>;
  t.equal(keys.length, 1);
  await tab.shoot('signing-keys');
  await tab.click('Done');
  await tab.click('Revoke');
  await tab.waitText('No signing keys.');
  t.same((await api.manage('GET', `/v1/tenants/${T}/signing-keys`)).body.data, [], 'revoked');
  // An ed25519 key: its public key is shown (never a private key), and the list names the algorithm.
  await tab.select('Algorithm', 'ed25519');
  await tab.click('Create signing key');
  await tab.page.waitForSelector('[data-testid="public-key"]');
  const publicKey = await tab.page.$eval('[data-testid="public-key"]', (el: any) => el.textContent as string);
  t.match(publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/, 'the public key is shown');
  const edKeys = (await api.manage('GET', `/v1/tenants/${T}/signing-keys`)).body.data as Array<{ keyId: string; algorithm: string; publicKey: string }>;
  t.match(edKeys, [{ algorithm: 'ed25519', publicKey }], 'the API lists the same public key');
  await tab.click('Done');
  await tab.page.waitForFunction(() => (document.querySelector('[data-testid="signing-keys"]') as any)?.innerText.includes('ed25519'));
  t.pass('the list shows the algorithm');
  await tab.click('Revoke');
  await tab.waitText('No signing keys.');

  // Sandbox: a test event whose first two simulated attempts fail; the run shows each attempt.
  await api.wire('trial', 'simulated', `${receiver.url}/sim`);
  const before = receiver.requests.length;
  await tab.go(`#/w/${T}/sandbox`);
  await tab.select('Queue', 'trial');
  await tab.fill('sb_fail_code', '503');
  await tab.fill('sb_fail_count', '2');
  await tab.fill('Ingress API key', creds.ingressKey);
  await tab.click('Send test event');
  await tab.page.waitForFunction(() => document.querySelector('[data-run-event] caption')?.textContent?.includes('delivered'), { timeout: 20_000 });
  const run = await tab.text();
  t.equal(run.split('\n').filter((l) => l.includes('\t503\t')).length, 2, 'two simulated attempts failed with 503');
  t.equal(await tab.page.$eval('#sb-key', (el) => (el as any).value), '', 'the key field is cleared after sending');
  t.equal(receiver.requests.length, before, 'nothing left the service');
  await tab.shoot('sandbox');

  checkTab(t, tab, [
    { path: '/console/api/session', status: 401 },
    { path: `/v1/tenants/${T}/queues/orders`, status: 400 },
    { path: `/v1/tenants/${T}`, status: 400 },
    { path: /^\/v1\/tenants\/[^/]+\/sandbox\/runs\//, status: 404 },
  ]);
});
