import t from 'tap';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, consoleLink, otherOrigin, sqlOnce, startConsoleNode } from '../helpers/console-e2e.js';

declare const document: any, location: any; // in page.evaluate callbacks (no DOM lib here)

// Signing in to the console in a real browser (Debian's Chromium): the key is
// exchanged once and kept nowhere, a wrong key, an expired session and a
// request forged on another origin are refused, and a Member (one-time link)
// can change nothing.
t.test('console sign-in, API keys, session, CSRF and a read-only Member', async (t) => {
  const { backends, creds, base, api, T } = await startConsoleNode(t);
  const browser = await startBrowser(t);
  t.equal((await api.manage('PUT', `/v1/tenants/${T}/queues/orders`, {})).status, 201);

  const owner = await ConsoleTab.open(await browser.createBrowserContext(), base, 'owner');
  await owner.go();
  await owner.waitText('License ID');
  const text = await owner.text();
  t.match(text, 'API key', 'the sign-in form has the reference words');
  const firstLoad = await owner.gzippedBytes();
  t.ok(firstLoad > 0 && firstLoad <= 250 * 1024, `what /console/ loads before sign-in is under 250 KiB gzipped (${(firstLoad / 1024).toFixed(1)} KiB)`);
  t.notOk(owner.requestedUrls.some((u) => !u.startsWith(base)), 'nothing is loaded from another origin');
  await owner.shoot('sign-in');

  // A wrong key is refused, with the API's message beside the form.
  await owner.fill('License ID', creds.licensePublicId);
  await owner.fill('API key', `${creds.buildKey.slice(0, -4)}AAAA`);
  await owner.click('Sign in');
  await owner.waitText('invalid_api_key');
  await owner.shoot('sign-in-refused');
  t.equal((await owner.page.cookies()).length, 0, 'no cookie after a wrong key');

  // The right key: License Home with the workspace.
  await owner.fill('License ID', creds.licensePublicId);
  await owner.fill('API key', creds.buildKey);
  await owner.click('Sign in');
  await owner.waitText(T);
  t.match(await owner.text(), 'Workspaces', 'License Home lists the workspaces');
  const cookie = (await owner.page.cookies()).find((c) => c.name === 'sg_console');
  t.ok(cookie?.httpOnly, 'the session cookie is HttpOnly');
  t.equal(cookie?.sameSite, 'Strict', 'and SameSite=Strict');
  await owner.shoot('license-home');

  // API keys tab: create (secret shown once), then revoke.
  await owner.click('API keys');
  await owner.waitText('Create an API key');
  const before = await api.manage('GET', `/v1/licenses/${creds.licensePublicId}/keys`);
  for (const k of before.body.items as Array<{ keyId: string }>) t.match(await owner.text(), k.keyId, `the keys tab shows ${k.keyId}`);
  await owner.fill('Name', 'ci ingress');
  await owner.select('Profile', 'ingress');
  await owner.click('Create key');
  await owner.waitText('shown once');
  const secret = await owner.page.$eval('[data-testid="secret-value"]', (el) => el.textContent ?? '');
  t.match(secret, /^qak_/, 'the new key is shown once');
  await owner.shoot('api-keys-created');
  t.equal((await api.postEvent('orders', '{}', { 'x-api-key': secret })).status, 202, 'the new key posts events');
  await owner.click('Done');
  t.notMatch(await owner.text(), secret, 'and is gone once dismissed');
  const made = ((await api.manage('GET', `/v1/licenses/${creds.licensePublicId}/keys`)).body.items as Array<{ keyId: string; name: string }>).find((k) => k.name === 'ci ingress');
  t.ok(made, 'the key exists');
  await owner.click('Revoke', `tr[data-key="${made!.keyId}"]`);
  await owner.page.waitForFunction((id: string) => !document.body.innerText.includes(id), { timeout: 10_000 }, made!.keyId);
  t.equal((await api.postEvent('orders', '{}', { 'x-api-key': secret })).status, 401, 'the revoked key is refused');
  await owner.shoot('api-keys');

  // A reload keeps the session; the key is nowhere in the browser.
  await owner.page.reload({ waitUntil: 'networkidle0' });
  await owner.settled();
  await owner.waitText('Create an API key');
  const kept = await owner.kept();
  for (const s of [creds.buildKey, creds.buildKey.split('.')[1]!, secret]) t.notMatch(kept, s, 'no key in storage, IndexedDB, the URL or script-visible cookies');
  t.notMatch(kept, 'sg_console', 'the session cookie is invisible to scripts');
  t.notOk(owner.requestedUrls.some((u) => u.includes(creds.buildKey.split('.')[1]!)), 'no requested URL carries the key');

  // A page on another port of the same host (same site, another origin) forges writes with the cookie.
  const evil = await otherOrigin(t, `<!doctype html><body>
    <form id="f" method="POST" action="${base}/v1/tenants/${T}/signing-keys"></form>
    <script>
      fetch(${JSON.stringify(`${base}/v1/tenants/${T}/keys`)}, { method: 'POST', mode: 'no-cors', credentials: 'include',
        headers: { 'content-type': 'text/plain' }, body: '{"profile":"build","name":"forged"}' })
        .finally(() => document.getElementById('f').submit());
    </script></body>`);
  const forged = await owner.page.browserContext().newPage();
  const statuses: number[] = [];
  forged.on('response', (r) => { if (r.url().startsWith(`${base}/v1/`)) statuses.push(r.status()); });
  await forged.goto(evil);
  await forged.waitForFunction((b: string) => location.href.startsWith(b), { timeout: 10_000 }, base);
  await forged.close();
  t.same(statuses.sort(), [403, 403], 'both forged writes are refused (403)');
  t.same((await api.manage('GET', `/v1/tenants/${T}/signing-keys`)).body.data, [], 'no signing key was made');
  t.notOk(((await api.manage('GET', `/v1/licenses/${creds.licensePublicId}/keys`)).body.items as Array<{ name: string }>).some((k) => k.name === 'forged'), 'no key was made');

  // The session expires: the next call shows the sign-in form again.
  await sqlOnce(backends.databaseUrl, `UPDATE console_sessions SET expires_at = now() - interval '1 second'`);
  await owner.click('Workspaces');
  await owner.waitText('Your session has expired');
  await owner.shoot('session-expired');

  // Sign in again, then sign out: the cookie is refused afterwards.
  await owner.fill('License ID', creds.licensePublicId);
  await owner.fill('API key', creds.buildKey);
  await owner.click('Sign in');
  await owner.waitText(T);
  const live = (await owner.page.cookies()).find((c) => c.name === 'sg_console')!;
  await owner.click('Sign out');
  await owner.waitText('You are signed out');
  const after = await fetch(`${base}/console/api/session`, { headers: { cookie: `sg_console=${live.value}` } });
  t.equal(after.status, 401, 'a signed-out session is refused');
  checkTab(t, owner, [
    { path: '/console/api/session', status: 401 },
    { path: `/v1/licenses/${creds.licensePublicId}/workspaces`, status: 401 },
  ]);

  // A Member, signed in through a one-time link: everything shows, nothing changes.
  const link = await consoleLink(backends.databaseUrl, base, T, 'Member');
  const member = await ConsoleTab.open(await browser.createBrowserContext(), base, 'member');
  await member.page.goto(link, { waitUntil: 'networkidle0' });
  await member.settled();
  await member.waitText(T);
  t.equal(new URL(member.page.url()).search, '', 'the link lands on /console/ without its token');
  await member.go(`#/w/${T}/queues`);
  await member.waitText('read-only');
  t.match(await member.text(), 'orders', 'a Member sees the queues');
  t.ok(await member.allDisabled('Archive'), 'Archive is disabled for a Member');
  t.equal(await member.page.$eval('a.button.primary', (a) => a.getAttribute('aria-disabled')), 'true', 'New queue is disabled');
  await member.shoot('member-queues');
  await member.go('#/keys');
  t.ok(await member.page.$eval('[data-testid="create-key"] fieldset', (f) => (f as any).disabled), 'a Member cannot create keys');
  const forcedStatus = await member.page.evaluate(async (tenant: string) => {
    const res = await fetch(`/v1/tenants/${tenant}/queues/forced`, { method: 'PUT', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: '{}' });
    return { status: res.status, code: ((await res.json()) as { error?: { code?: string } }).error?.code };
  }, T);
  t.same(forcedStatus, { status: 403, code: 'missing_permission' }, 'the API refuses a Member who forces a write');
  t.equal((await api.manage('GET', `/v1/tenants/${T}/queues/forced`)).status, 404, 'nothing was created');
  checkTab(t, member, [{ path: `/v1/tenants/${T}/queues/forced`, status: 403 }]);

  // The link is single-use.
  const again = await ConsoleTab.open(await browser.createBrowserContext(), base, 'link-reused');
  await again.page.goto(link, { waitUntil: 'networkidle0' });
  await again.settled();
  await again.waitText('already used');
  t.equal(new URL(again.page.url()).search, '', 'the error code is taken out of the address bar');
  await again.shoot('link-reused');
  checkTab(t, again, [{ path: '/console/api/session', status: 401 }]);
});
