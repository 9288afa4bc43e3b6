import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, startTestNode } from '../../helpers/nodes.js';
import { cookieLine, cookieValue, httpCall } from '../../helpers/console.js';
import { consoleAuthFor, startOidcProvider } from '../../helpers/oidc-provider.js';
import { connectDatabase } from '../../../src/storage/db.js';
import { MembershipRepo } from '../../../src/storage/membership-repo.js';

// Console sign-in through OpenID Connect (authorization code + PKCE S256)
// against a real, small identity provider served here (test/helpers/oidc-provider.ts):
// discovery, an authorize endpoint that redirects back with a code, a token
// endpoint that checks the PKCE verifier, and a JWKS of a jose-generated key.
const provider = await startOidcProvider(t);
const { issuer, misbehave } = provider;

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, {
  roles: ['management'],
  auth: consoleAuthFor(provider),
});
const base = `http://127.0.0.1:${node.port}`;
const T = creds.tenantPublicId;
const sql = connectDatabase(backends.databaseUrl, 2);
t.teardown(() => sql.end());
const wsId = String((await sql`SELECT id FROM workspaces WHERE public_id = ${T}`)[0]!.id);
await new MembershipRepo(sql).grant(wsId, 'alice', 'Owner');
await new MembershipRepo(sql).grant(wsId, 'mallory', 'Member');

/**
 * The browser's part: start at streamgate, follow to the provider, come back
 * to the callback with the flow cookie. `tamper` changes the callback URL or
 * the flow cookie first. Returns the callback's answer.
 */
async function signInFlow(tamper: { callback?: (u: URL) => void; flowCookie?: (v: string) => string } = {}) {
  const start = await httpCall(base, 'GET', '/console/auth/oidc/start');
  if (start.status !== 303) throw new Error(`start answered ${start.status}`);
  const flow = cookieValue(start.setCookies, 'sg_oidc')!;
  const authorize = await httpCall(base, 'GET', start.headers.location!);
  const callback = new URL(authorize.headers.location!);
  tamper.callback?.(callback);
  const cookie = tamper.flowCookie ? tamper.flowCookie(flow) : flow;
  const done = await httpCall(base, 'GET', callback.pathname + callback.search, { headers: { cookie: `sg_oidc=${cookie}` } });
  return { start, done };
}

t.test('the config says OIDC is on', async (t) => {
  t.equal((await httpCall(base, 'GET', '/console/api/config')).json.oidc, true);
});

t.test('full flow: PKCE S256, state and nonce, then a session mapped to the memberships', async (t) => {
  provider.tokenRequests = [];
  const { start, done } = await signInFlow();
  const authorize = new URL(start.headers.location!);
  t.equal(authorize.origin + authorize.pathname, `${issuer}/authorize`);
  t.equal(authorize.searchParams.get('redirect_uri'), `${base}/console/auth/oidc/callback`);
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  t.match(authorize.searchParams.get('scope'), /\bopenid\b/);
  t.notOk(authorize.searchParams.has('code_verifier'), 'the verifier never travels through the browser URL');
  const flowLine = cookieLine(start.setCookies, 'sg_oidc')!;
  t.match(flowLine, /HttpOnly; SameSite=Lax; Path=\/console\/auth\/oidc; Max-Age=600/);

  t.equal(done.status, 303);
  t.equal(done.headers.location, '/console/');
  t.same(provider.tokenRequests, [{ verifierOk: true }], 'the token endpoint got the matching PKCE verifier');
  const cookie = cookieValue(done.setCookies, 'sg_console')!;
  t.ok(cookie);
  t.match(cookieLine(done.setCookies, 'sg_console')!, /HttpOnly; SameSite=Strict; Path=\//);
  t.match(cookieLine(done.setCookies, 'sg_oidc')!, /Max-Age=0/, 'the flow cookie is cleared');

  const session = await httpCall(base, 'GET', '/console/api/session', { headers: { cookie: `sg_console=${cookie}` } });
  t.equal(session.status, 200);
  t.equal(session.json.kind, 'oidc');
  t.equal(session.json.subject, 'alice');
  t.equal(session.json.licensePublicId, null);
  t.same(session.json.workspaces, [{ tenantPublicId: T, name: 'default', role: 'Owner' }]);
  const put = await httpCall(base, 'PUT', `/v1/tenants/${T}/queues/by-oidc`, { headers: { cookie: `sg_console=${cookie}`, origin: base }, body: {} });
  t.equal(put.status, 201, 'an Owner writes with the session');
  const catalog = await httpCall(base, 'GET', `/waas/producer/${T}/catalog`, { headers: { cookie: `sg_console=${cookie}` } });
  t.equal(catalog.status, 200);

  t.equal((await httpCall(base, 'DELETE', '/console/api/session', { headers: { cookie: `sg_console=${cookie}`, origin: base } })).status, 204);
  t.equal((await httpCall(base, 'GET', '/console/api/session', { headers: { cookie: `sg_console=${cookie}` } })).status, 401, 'signed out');
});

t.test('a Member signed in through the provider reads only', async (t) => {
  provider.nextSubject = 'mallory';
  t.teardown(() => void (provider.nextSubject = 'alice'));
  const { done } = await signInFlow();
  const cookie = cookieValue(done.setCookies, 'sg_console')!;
  t.equal((await httpCall(base, 'GET', `/v1/tenants/${T}/queues/by-oidc`, { headers: { cookie: `sg_console=${cookie}` } })).status, 200);
  const put = await httpCall(base, 'PUT', `/v1/tenants/${T}/queues/by-member`, { headers: { cookie: `sg_console=${cookie}`, origin: base }, body: {} });
  t.equal(put.status, 403);
  t.equal(put.json.error.code, 'missing_permission');
});

const refused = (t: Test, done: Awaited<ReturnType<typeof signInFlow>>['done']) => {
  t.equal(done.status, 303);
  t.equal(done.headers.location, '/console/?signin_error=oidc_failed');
  t.equal(cookieValue(done.setCookies, 'sg_console'), null, 'no session cookie');
};

t.test('state mismatch: refused before the code is redeemed', async (t) => {
  provider.tokenRequests = [];
  const { done } = await signInFlow({ callback: (u) => u.searchParams.set('state', 'A'.repeat(43)) });
  refused(t, done);
  t.same(provider.tokenRequests, [], 'the code was not redeemed');
});

t.test('no flow cookie (a callback this browser did not start): refused', async (t) => {
  const { done } = await signInFlow({ flowCookie: () => '' });
  refused(t, done);
});

t.test('a wrong PKCE verifier: the provider refuses the code, so do we', async (t) => {
  provider.tokenRequests = [];
  const { done } = await signInFlow({ flowCookie: (v) => `${v.slice(0, v.lastIndexOf('.'))}.${'B'.repeat(43)}` });
  refused(t, done);
  t.same(provider.tokenRequests, [{ verifierOk: false }]);
});

t.test('an ID token with the wrong nonce: refused', async (t) => {
  misbehave.nonce = true;
  t.teardown(() => void (misbehave.nonce = false));
  refused(t, (await signInFlow()).done);
});

t.test('an ID token for another audience: refused', async (t) => {
  misbehave.audience = true;
  t.teardown(() => void (misbehave.audience = false));
  refused(t, (await signInFlow()).done);
});

t.test('the provider answering an error: refused', async (t) => {
  const { done } = await signInFlow({ callback: (u) => {
    u.searchParams.delete('code');
    u.searchParams.set('error', 'access_denied');
  } });
  refused(t, done);
});

/** A node of its own whose console trusts `consoleIssuer`; its sign-in start answer. */
async function startWithIssuer(t: Test, consoleIssuer: string) {
  const other = await startTestNode(t, backends, { roles: ['management'], auth: consoleAuthFor(provider, consoleIssuer) });
  return httpCall(`http://127.0.0.1:${other.port}`, 'GET', '/console/auth/oidc/start');
}

t.test('a discovery document that names another issuer: no sign-in starts', async (t) => {
  const start = await startWithIssuer(t, `${issuer}/mixup`);
  t.equal(start.status, 303);
  t.equal(start.headers.location, '/console/?signin_error=oidc_failed', 'back to the sign-in page with the error, not to the provider');
  t.equal(cookieValue(start.setCookies, 'sg_oidc'), null, 'no flow was started');
});

t.test('a provider on plain http that is not a loopback name: refused, nothing is sent to it', async (t) => {
  // 0.0.0.0 reaches this machine but is not 127.0.0.1, localhost or [::1]: what a remote provider would be.
  let requests = 0;
  const plain = http.createServer((_req, res) => {
    requests++;
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => plain.listen(0, '0.0.0.0', r));
  t.teardown(() => new Promise<void>((r) => plain.close(() => r())));
  const start = await startWithIssuer(t, `http://0.0.0.0:${(plain.address() as AddressInfo).port}`);
  t.equal(start.status, 303);
  t.equal(start.headers.location, '/console/?signin_error=oidc_failed');
  t.equal(cookieValue(start.setCookies, 'sg_oidc'), null);
  t.equal(requests, 0, 'the discovery document was not requested over plain http');
});
