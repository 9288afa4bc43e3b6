import t from 'tap';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, startConsoleNode } from '../helpers/console-e2e.js';
import { consoleAuthFor, startOidcProvider } from '../helpers/oidc-provider.js';
import { connectDatabase } from '../../src/storage/db.js';
import { MembershipRepo } from '../../src/storage/membership-repo.js';
import { TopologyRepo } from '../../src/storage/topology-repo.js';

// The identity-provider button, driven in a real browser: Chromium goes to
// the provider (test/helpers/oidc-provider.ts, on another port), comes back to
// the callback and lands signed in with the workspaces its memberships give;
// a provider that answers with a wrong nonce leaves it signed out with the
// message on the sign-in page.
t.test('console sign-in through the identity provider, in the browser', async (t) => {
  const provider = await startOidcProvider(t);
  const { backends, base, T } = await startConsoleNode(t, { auth: consoleAuthFor(provider) });
  const sql = connectDatabase(backends.databaseUrl, 1);
  t.teardown(() => sql.end());
  const ws = await new TopologyRepo(sql).workspaceByPublicId(T);
  await new MembershipRepo(sql).grant(ws!.id, 'alice', 'Owner');
  const browser = await startBrowser(t);

  const tab = await ConsoleTab.open(await browser.createBrowserContext(), base, 'oidc');
  await tab.go();
  await tab.waitText('Sign in with your identity provider');
  await tab.shoot('sign-in-oidc');
  await tab.click('Sign in with your identity provider');
  await tab.waitText(T);
  t.ok(tab.requestedUrls.some((u) => u.startsWith(`${provider.issuer}/authorize?`)), 'the browser went through the provider');
  t.same(provider.tokenRequests, [{ verifierOk: true }], 'the code was redeemed once, with the PKCE verifier');
  t.match(await tab.text(), 'Workspaces', 'License Home lists the workspace alice owns');
  const cookies = await tab.page.cookies();
  const session = cookies.find((c) => c.name === 'sg_console');
  t.ok(session?.httpOnly && session.sameSite === 'Strict', 'an HttpOnly, SameSite=Strict session cookie');
  t.notOk(cookies.some((c) => c.name === 'sg_oidc' && c.value !== ''), 'the flow cookie is gone');
  const kept = await tab.kept();
  t.notMatch(kept, /code=|state=|id_token/, 'no code, state or token is left in the URL or storage');
  await tab.shoot('signed-in-oidc');

  // Reload: the session holds.
  await tab.go();
  await tab.waitText(T);

  // A provider whose ID token carries another nonce: back at sign-in, with the message, no session.
  const second = await ConsoleTab.open(await browser.createBrowserContext(), base, 'oidc-refused');
  provider.misbehave.nonce = true;
  await second.go();
  await second.click('Sign in with your identity provider');
  await second.waitText('Signing in with your identity provider failed');
  t.notOk((await second.page.cookies()).some((c) => c.name === 'sg_console'), 'no session cookie after a refused ID token');
  await second.shoot('sign-in-oidc-refused');

  // The app asks for its session on each load: 401 while signed out.
  const signedOut = { path: '/console/api/session', status: 401 };
  checkTab(t, tab, [signedOut]);
  checkTab(t, second, [signedOut]);
});
