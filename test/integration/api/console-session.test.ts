import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { backendEnv, freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, startTestNode } from '../../helpers/nodes.js';
import { cookieLine, cookieValue, httpCall } from '../../helpers/console.js';
import { rawRequest } from '../../helpers/raw-http.js';
import { connectDatabase } from '../../../src/storage/db.js';

// Console sign-in and the session cookie as a management credential (issue 14,
// docs/console.md): key exchange, one-time links, expiry, sign-out, Members
// read-only, and the same-origin rule for cookie-authenticated writes.
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const other = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['management'] });
const base = `http://127.0.0.1:${node.port}`;
const ORIGIN = base;
const T = creds.tenantPublicId;
const sql = connectDatabase(backends.databaseUrl, 2);
t.teardown(() => sql.end());
const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));

const call = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => httpCall(base, method, path, { headers, body });
/** A request as the console app makes it: the cookie, and the Origin a browser adds to writes. */
const asConsole = (cookie: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(method, path, { cookie: `sg_console=${cookie}`, ...(method === 'GET' ? {} : { origin: ORIGIN }), ...headers }, body);
const signIn = async (licensePublicId: string, key: string) => {
  const res = await call('POST', '/console/api/session', { origin: ORIGIN }, { licensePublicId, key });
  return { res, cookie: cookieValue(res.setCookies, 'sg_console') };
};
const keyManage = (method: string, path: string, body?: unknown) =>
  call(method, path, { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId }, body);
/** Runs the CLI against this test's database; resolves with its stdout. */
const cli = (args: string[]) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...backendEnv(backends, node.port), LOG_LEVEL: 'silent' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });

t.test('GET /console/api/config is public and says whether OIDC is configured', async (t) => {
  const res = await call('GET', '/console/api/config');
  t.equal(res.status, 200);
  t.same(res.json, { oidc: false, version: '0.1.0' });
});

t.test('sign in with a Build key: the cookie, the session body, and the whole management API', async (t) => {
  const { res, cookie } = await signIn(creds.licensePublicId, creds.buildKey);
  t.equal(res.status, 200);
  t.ok(cookie, 'a session cookie is set');
  const line = cookieLine(res.setCookies, 'sg_console')!;
  t.match(line, /; HttpOnly/);
  t.match(line, /; SameSite=Strict/);
  t.match(line, /; Path=\/(;|$)/);
  t.match(line, /; Max-Age=43200/);
  t.notMatch(line, /Secure/, 'not Secure over plain http');
  t.notMatch(line, /qak_/, 'the key is not in the cookie');
  t.notMatch(res.text, /qak_/, 'nor in the body');
  t.equal(res.json.kind, 'key');
  t.equal(res.json.licensePublicId, creds.licensePublicId);
  t.same(res.json.workspaces, [{ tenantPublicId: T, name: 'default', role: 'Owner' }]);
  t.ok(Date.parse(res.json.expiresAt) > Date.now() + 43_000_000);

  const stored = await sql`SELECT token_hash, key_id FROM console_sessions WHERE kind = 'key'`;
  t.ok(stored.every((r) => !String(r.token_hash).includes(cookie!)), 'only a hash of the session id is stored');

  const session = await asConsole(cookie!, 'GET', '/console/api/session');
  t.equal(session.status, 200);
  t.equal(session.json.subject, res.json.subject);

  // /v1 and /waas take the cookie as the key's principal.
  t.equal((await asConsole(cookie!, 'PUT', `/v1/tenants/${T}/queues/by-cookie`, {})).status, 201);
  t.equal((await asConsole(cookie!, 'GET', `/v1/tenants/${T}/queues/by-cookie`)).status, 200);
  t.equal((await asConsole(cookie!, 'PUT', '/waas/streams', { producerTenantPublicId: T, name: 'cookie-stream', isPublic: true })).status, 200);
  const catalog = await asConsole(cookie!, 'GET', `/waas/producer/${T}/catalog`);
  t.equal(catalog.status, 200);
  t.match(catalog.text, /cookie-stream/);
  // Another license's workspace stays out of reach (404, as with the key itself).
  t.equal((await asConsole(cookie!, 'GET', `/v1/tenants/${other.tenantPublicId}/queues/by-cookie`)).status, 404);

  // A new connection (no keep-alive): the session lives on the server, not the socket.
  const raw = await rawRequest(node.port, Buffer.from(`GET /console/api/session HTTP/1.1\r\nhost: 127.0.0.1:${node.port}\r\ncookie: sg_console=${cookie}\r\nconnection: close\r\n\r\n`));
  t.equal(raw.status, 200);
  t.match(raw.body, /"kind":"key"/);
});

t.test('wrong key, another license\'s key, a malformed body: refused, no cookie', async (t) => {
  const tries: Array<[string, unknown, number, string]> = [
    ['a wrong secret', { licensePublicId: creds.licensePublicId, key: `${creds.buildKey.slice(0, -4)}${creds.buildKey.endsWith('AAAA') ? 'BBBB' : 'AAAA'}` }, 401, 'invalid_api_key'],
    ["another license's key", { licensePublicId: creds.licensePublicId, key: other.buildKey }, 401, 'invalid_api_key'],
    ['the key under another license id', { licensePublicId: other.licensePublicId, key: creds.buildKey }, 401, 'invalid_api_key'],
    ['an unknown key', { licensePublicId: creds.licensePublicId, key: 'qak_key_nope.nope' }, 401, 'invalid_api_key'],
    ['no key', { licensePublicId: creds.licensePublicId }, 400, 'validation_failed'],
  ];
  for (const [label, body, status, code] of tries) {
    const res = await call('POST', '/console/api/session', { origin: ORIGIN }, body);
    t.equal(res.status, status, label);
    t.equal(res.json.error.code, code);
    t.equal(cookieValue(res.setCookies, 'sg_console'), null);
  }
  const forged = await call('GET', '/console/api/session', { cookie: 'sg_console=sgs_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
  t.equal(forged.status, 401);
  t.equal((await call('GET', `/v1/tenants/${T}/queues/by-cookie`, { cookie: 'sg_console=sgs_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status, 401);
  t.equal((await call('GET', '/console/api/session')).status, 401, 'no cookie: 401');
  // A sign-in form posted from another origin (login CSRF) is refused.
  const cross = await call('POST', '/console/api/session', { origin: 'http://evil.example' }, { licensePublicId: creds.licensePublicId, key: creds.buildKey });
  t.equal(cross.status, 403);
  t.equal(cookieValue(cross.setCookies, 'sg_console'), null);
});

t.test('sign-out revokes the session on the server; expiry ends it', async (t) => {
  const { cookie } = await signIn(creds.licensePublicId, creds.buildKey);
  const out = await asConsole(cookie!, 'DELETE', '/console/api/session');
  t.equal(out.status, 204);
  t.match(cookieLine(out.setCookies, 'sg_console')!, /^sg_console=; .*Max-Age=0/);
  t.equal((await asConsole(cookie!, 'GET', '/console/api/session')).status, 401, 'the old cookie is refused');
  t.equal((await asConsole(cookie!, 'GET', `/v1/tenants/${T}/queues/by-cookie`)).status, 401);

  const second = (await signIn(creds.licensePublicId, creds.buildKey)).cookie!;
  t.equal((await asConsole(second, 'GET', '/console/api/session')).status, 200);
  // Time passes: the session's absolute end is reached.
  await sql`UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE revoked_at IS NULL`;
  t.equal((await asConsole(second, 'GET', '/console/api/session')).status, 401);
  const expired = await asConsole(second, 'GET', `/waas/producer/${T}/catalog`);
  t.equal(expired.status, 401);
  t.equal(expired.json.error.code, 'unauthorized');
});

t.test('revoking the key ends the sessions it was exchanged for', async (t) => {
  const created = await keyManage('POST', `/v1/tenants/${T}/keys`, { profile: 'full', name: 'to revoke' });
  const { res, cookie } = await signIn(creds.licensePublicId, created.json.key);
  t.same(res.json.workspaces.map((w: { role: string }) => w.role), ['Admin'], 'a full key signs in as Admin');
  t.equal((await asConsole(cookie!, 'GET', `/v1/tenants/${T}/queues/by-cookie`)).status, 200);
  t.equal((await keyManage('DELETE', `/v1/tenants/${T}/keys/${created.json.keyId}`)).status, 204);
  t.equal((await asConsole(cookie!, 'GET', `/v1/tenants/${T}/queues/by-cookie`)).status, 401);
});

t.test('a Member (ingress key, or a Member link) reads but cannot write: 403 missing_permission', async (t) => {
  const { res, cookie } = await signIn(creds.licensePublicId, creds.ingressKey);
  t.same(res.json.workspaces.map((w: { role: string }) => w.role), ['Member']);
  t.equal((await asConsole(cookie!, 'GET', `/v1/tenants/${T}/queues/by-cookie`)).status, 200);
  const write = await asConsole(cookie!, 'PUT', `/v1/tenants/${T}/queues/member-made`, {});
  t.equal(write.status, 403);
  t.equal(write.json.error.code, 'missing_permission');

  const link = await cli(['admin', 'console-link', '--tenant', T, '--role', 'Member']);
  const member = await call('GET', new URL(link.out.trim()).pathname + new URL(link.out.trim()).search);
  const memberCookie = cookieValue(member.setCookies, 'sg_console')!;
  t.ok(memberCookie);
  t.equal((await asConsole(memberCookie, 'GET', `/v1/tenants/${T}/queues/by-cookie`)).status, 200);
  t.equal((await asConsole(memberCookie, 'GET', `/waas/producer/${T}/catalog`)).status, 200);
  for (const [method, path, body] of [
    ['PUT', `/v1/tenants/${T}/queues/member-made`, {}],
    ['PUT', '/waas/streams', { producerTenantPublicId: T, name: 'member-stream', isPublic: true }],
    ['POST', `/v1/tenants/${T}/keys`, undefined],
  ] as const) {
    const res = await asConsole(memberCookie, method, path, body);
    t.equal(res.status, 403, `${method} ${path}`);
    t.equal(res.json.error.code, 'missing_permission');
  }
  t.equal((await keyManage('GET', `/v1/tenants/${T}/queues/member-made`)).status, 404, 'nothing was made');
});

t.test('the one-time link (from the CLI): works once; used, expired and tampered links are refused', async (t) => {
  const printed = await cli(['admin', 'console-link', '--tenant', T, '--role', 'Owner']);
  t.equal(printed.code, 0, printed.err);
  const url = new URL(printed.out.trim());
  t.equal(url.origin, `http://127.0.0.1:${node.port}`, 'the printed URL points at this server');
  t.equal(url.pathname, '/console/auth/link');
  const token = url.searchParams.get('token')!;
  const stored = await sql`SELECT encode(token_hash, 'hex') AS h FROM console_links`;
  t.ok(stored.every((r) => !String(r.h).includes(Buffer.from(token).toString('hex'))), 'only a hash of the token is stored');

  const first = await call('GET', url.pathname + url.search);
  t.equal(first.status, 303);
  t.equal(first.headers.location, '/console/');
  t.equal(first.headers['referrer-policy'], 'no-referrer', 'the token does not leak through Referer');
  const cookie = cookieValue(first.setCookies, 'sg_console')!;
  t.match(cookieLine(first.setCookies, 'sg_console')!, /HttpOnly; SameSite=Strict; Path=\//);
  const session = await asConsole(cookie, 'GET', '/console/api/session');
  t.equal(session.json.kind, 'link');
  t.equal(session.json.licensePublicId, creds.licensePublicId);
  t.same(session.json.workspaces, [{ tenantPublicId: T, name: 'default', role: 'Owner' }]);
  t.equal((await asConsole(cookie, 'PUT', `/v1/tenants/${T}/queues/by-link`, {})).status, 201, 'an Owner link session writes');
  t.equal((await asConsole(cookie, 'GET', `/v1/tenants/${other.tenantPublicId}/queues/by-link`)).status, 404, 'only its own workspace');
  // License Home: the link's workspace (and its keys), never another license.
  const home = await asConsole(cookie, 'GET', `/v1/licenses/${creds.licensePublicId}/workspaces`);
  t.equal(home.status, 200, 'a link session opens its license home');
  t.same(home.json.items.map((w: { tenantPublicId: string }) => w.tenantPublicId), [T]);
  t.equal((await asConsole(cookie, 'GET', `/v1/licenses/${creds.licensePublicId}/keys`)).status, 200);
  t.equal((await asConsole(cookie, 'GET', `/v1/licenses/${other.licensePublicId}/workspaces`)).status, 404, 'another license is not there');

  const again = await call('GET', url.pathname + url.search);
  t.equal(again.status, 303);
  t.equal(again.headers.location, '/console/?signin_error=link_invalid', 'a second use is refused');
  t.equal(cookieValue(again.setCookies, 'sg_console'), null);

  const tampered = await call('GET', `/console/auth/link?token=${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`);
  t.equal(tampered.headers.location, '/console/?signin_error=link_invalid');
  t.equal(cookieValue(tampered.setCookies, 'sg_console'), null);
  for (const bad of ['', 'nope', `${token}x`]) {
    const res = await call('GET', `/console/auth/link?token=${encodeURIComponent(bad)}`);
    t.equal(res.headers.location, '/console/?signin_error=link_invalid');
  }

  const late = new URL((await cli(['admin', 'console-link', '--tenant', T, '--role', 'Admin'])).out.trim());
  await sql`UPDATE console_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`;
  const expired = await call('GET', late.pathname + late.search);
  t.equal(expired.headers.location, '/console/?signin_error=link_invalid', 'an expired link is refused');
  t.equal(cookieValue(expired.setCookies, 'sg_console'), null);

  const bad = await cli(['admin', 'console-link', '--tenant', T, '--role', 'Root']);
  t.equal(bad.code, 2);
  const unknown = await cli(['admin', 'console-link', '--tenant', 'ten_nope', '--role', 'Owner']);
  t.equal(unknown.code, 1);
});

t.test('CSRF: cookie-authenticated writes from another origin are refused (403), same-origin ones pass', async (t) => {
  const { cookie } = await signIn(creds.licensePublicId, creds.buildKey);
  const otherPort = node.port === 65535 ? node.port - 1 : node.port + 1;
  const foreign: Array<[string, Record<string, string>]> = [
    ['Origin of another port', { origin: `http://127.0.0.1:${otherPort}` }],
    ['Origin of another host', { origin: 'http://evil.example' }],
    ['Origin of another scheme', { origin: `https://127.0.0.1:${node.port}` }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site (another port)', { 'sec-fetch-site': 'same-site', origin: ORIGIN }],
    ['neither header', {}],
    ['Origin: null', { origin: 'null' }],
  ];
  const writes: Array<[string, string, unknown]> = [
    ['PUT', `/v1/tenants/${T}/queues/csrf-made`, {}],
    ['PUT', '/waas/streams', { producerTenantPublicId: T, name: 'csrf-stream', isPublic: true }],
    ['DELETE', `/v1/tenants/${T}/queues/by-cookie`, undefined],
    ['POST', `/v1/tenants/${T}/keys`, undefined], // body-less POST
    ['DELETE', '/console/api/session', undefined],
  ];
  const keysBefore = (await keyManage('GET', `/v1/tenants/${T}/keys`)).json.data.length;
  for (const [label, headers] of foreign) {
    for (const [method, path, body] of writes) {
      const res = await call(method, path, { cookie: `sg_console=${cookie}`, ...headers }, body);
      t.equal(res.status, 403, `${label}: ${method} ${path}`);
      t.equal(res.json?.error.code, 'forbidden');
    }
  }
  t.equal((await keyManage('GET', `/v1/tenants/${T}/queues/csrf-made`)).status, 404, 'nothing was created');
  t.equal((await keyManage('GET', `/v1/tenants/${T}/queues/by-cookie`)).status, 200, 'nothing was deleted');
  t.equal((await keyManage('GET', `/v1/tenants/${T}/keys`)).json.data.length, keysBefore, 'no key was made');
  t.equal((await asConsole(cookie!, 'GET', '/console/api/session')).status, 200, 'the session was not signed out');

  // Same origin: by Sec-Fetch-Site, or by Origin when the browser sends no Sec-Fetch-Site.
  t.equal((await call('PUT', `/v1/tenants/${T}/queues/csrf-made`, { cookie: `sg_console=${cookie}`, 'sec-fetch-site': 'same-origin' }, {})).status, 201);
  t.equal((await call('POST', `/v1/tenants/${T}/keys`, { cookie: `sg_console=${cookie}`, origin: ORIGIN })).status, 201, 'a same-origin body-less POST passes');
  // Reads need no origin proof (SameSite=Strict keeps the cookie off cross-site requests anyway).
  t.equal((await call('GET', `/v1/tenants/${T}/queues/csrf-made`, { cookie: `sg_console=${cookie}`, 'sec-fetch-site': 'cross-site' })).status, 200);
  // API-key and bearer requests are not cookie-authenticated: no origin rule.
  const keyed = await call('PUT', `/v1/tenants/${T}/queues/key-made`, { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId, origin: 'http://evil.example', cookie: `sg_console=${cookie}` }, {});
  t.equal(keyed.status, 201);
});

t.test('over https (console.publicUrl): the cookie is Secure and the origin is the public one', async (t) => {
  const b2 = await freshBackends(t);
  const c2 = await bootstrapDatabase(b2.databaseUrl);
  const secureNode = await startTestNode(t, b2, { roles: ['management'], console: { dir: '', publicUrl: 'https://console.example.test', sessionTtlSeconds: 3600, oidcClientSecret: '' } });
  const base2 = `http://127.0.0.1:${secureNode.port}`;
  const res = await httpCall(base2, 'POST', '/console/api/session', { headers: { origin: 'https://console.example.test' }, body: { licensePublicId: c2.licensePublicId, key: c2.buildKey } });
  t.equal(res.status, 200);
  const line = cookieLine(res.setCookies, 'sg_console')!;
  t.match(line, /; Secure/);
  t.match(line, /; Max-Age=3600/);
  const cookie = cookieValue(res.setCookies, 'sg_console')!;
  const path = `/v1/tenants/${c2.tenantPublicId}/queues/q`;
  t.equal((await httpCall(base2, 'PUT', path, { headers: { cookie: `sg_console=${cookie}`, origin: base2 }, body: {} })).status, 403, 'the Host-derived origin is not the public one');
  t.equal((await httpCall(base2, 'PUT', path, { headers: { cookie: `sg_console=${cookie}`, origin: 'https://console.example.test' }, body: {} })).status, 201);
});
