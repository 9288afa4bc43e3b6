import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { freshBackends } from '../../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../../helpers/nodes.js';
import { claimsFor, ecKeys, rsaKeys, signEs256, signHs256, signRs256 } from '../../../helpers/jwt.js';
import { Waas } from '../../../helpers/waas.js';
import { connectDatabase } from '../../../../src/storage/db.js';
import { MembershipRepo } from '../../../../src/storage/membership-repo.js';

// /waas/* authentication and authorisation (docs/api.md#authentication): Build
// keys with X-License-PublicId, console sessions (JWT from a JWKS URL served
// here, or a shared secret) mapped to memberships; 401, 403, 404 as specified.
const ISS = 'https://id.example.test/';
const AUD = 'streamgate';
const SECRET = 'console-shared-secret-for-tests';
const rsa = rsaKeys();
const ec = ecKeys();
let jwksFetches = 0;
const idp = http.createServer((_req, res) => {
  jwksFetches++;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ keys: [
    { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa-1', use: 'sig', alg: 'RS256' },
    { ...ec.publicKey.export({ format: 'jwk' }), kid: 'ec-1', use: 'sig', alg: 'ES256' },
  ] }));
});
await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => idp.close(() => r())));

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const other = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, {
  roles: ['management'],
  auth: { console: {
    issuer: ISS, audience: AUD, sharedSecret: SECRET,
    jwksUrl: `http://127.0.0.1:${(idp.address() as AddressInfo).port}/.well-known/jwks.json`,
  } },
});
const api = clientFor(node.port, creds);
const waas = new Waas(api);
const sql = connectDatabase(backends.databaseUrl, 2);
t.teardown(() => sql.end());
const memberships = new MembershipRepo(sql);
const wsId = async (tenant: string) => String((await sql`SELECT id FROM workspaces WHERE public_id = ${tenant}`)[0]!.id);

const stream = await waas.putStream('orders');
const partner = await waas.newPartner('p@partner.test');
const pkg = await waas.createPackage('Pkg');
const sub = await waas.subscribe(partner, stream.publicId);
const T = creds.tenantPublicId;

/** Every /waas write, as the producer would call it (and the partner-side ones). */
const writes: Array<[string, string, object?]> = [
  ['PUT', '/waas/streams', { producerTenantPublicId: T, name: 'orders', isPublic: true }],
  ['POST', '/waas/enable-producer', { producerTenantPublicId: T }],
  ['POST', '/waas/integrations', { producerTenantPublicId: T, email: 'x@partner.test' }],
  ['POST', '/waas/activations', { producerTenantPublicId: T, groupKey: 'g', integrationPublicId: partner.integrationPublicId }],
  ['DELETE', '/waas/activations', { producerTenantPublicId: T, groupKey: 'g', integrationPublicId: partner.integrationPublicId }],
  ['POST', `/waas/producer/${T}/packages`, { name: 'n' }],
  ['PUT', `/waas/producer/${T}/packages/${pkg.publicId}`, { name: 'n' }],
  ['POST', `/waas/producer/${T}/packages/${pkg.publicId}/streams`, { catalogEntryPublicId: stream.publicId }],
  ['DELETE', `/waas/producer/${T}/packages/${pkg.publicId}/streams/${stream.publicId}`],
  ['POST', `/waas/producer/${T}/packages/${pkg.publicId}/archive`],
  ['POST', waas.blockPath(partner, 'streams', stream.publicId)],
  ['DELETE', waas.blockPath(partner, 'streams', stream.publicId)],
  ['POST', waas.blockPath(partner, 'packages', pkg.publicId)],
  ['DELETE', waas.blockPath(partner, 'packages', pkg.publicId)],
  ['POST', `/waas/integrations/${partner.integrationPublicId}/subscriptions`, { catalogEntryPublicId: stream.publicId }],
  ['DELETE', `/waas/integrations/${partner.integrationPublicId}/subscriptions/${sub.publicId}`],
];
const producerReads = [`/waas/producer/${T}/catalog`, `/waas/producer/${T}/integrations`, `/waas/producer/${T}/packages`, `/waas/producer/${T}/metrics/series?history=1h`,
  `/waas/producer/${T}/integrations/${partner.integrationPublicId}/blocks`, `/waas/producer/${T}/activations`];
const call = (method: string, path: string, headers: Record<string, string>, body?: object) => api.request(method, path, { body, headers });

t.test('no credentials, a bad key or a wrong license header: 401 unauthorized', async (t) => {
  const attempts: Record<string, string>[] = [{}, { 'x-api-key': 'qak_key_nope.nope' }, { 'x-api-key': creds.buildKey, 'x-license-publicid': other.licensePublicId }, { authorization: 'Basic abc' }];
  for (const headers of attempts) {
    for (const [method, path, body] of [writes[0]!, ['GET', producerReads[0]!] as [string, string]]) {
      const res = await call(method, path, headers, body);
      t.equal(res.status, 401, `${method} ${path} with ${Object.keys(headers).join('+') || 'nothing'}`);
      t.equal(res.body.error.code, 'unauthorized');
      t.type(res.body.error.message, 'string');
    }
  }
});

t.test('ingress and full keys: every write is 403 missing_permission; reads are allowed', async (t) => {
  const full = await api.manage('POST', api.tenantPath('/keys'), { profile: 'full' });
  t.equal(full.status, 201);
  for (const [profile, key] of [['ingress', creds.ingressKey], ['full', full.body.key]] as const) {
    const headers = { 'x-api-key': key, 'x-license-publicid': creds.licensePublicId };
    for (const [method, path, body] of writes) {
      const res = await call(method, path, headers, body);
      t.equal(res.status, 403, `${profile}: ${method} ${path}`);
      t.equal(res.body?.error?.code, 'missing_permission');
    }
    for (const path of producerReads) t.equal((await call('GET', path, headers)).status, 200, `${profile}: GET ${path}`);
  }
  // The same refusal through Authorization: Bearer qak_…
  const bearer = await call('PUT', '/waas/streams', { authorization: `Bearer ${creds.ingressKey}`, 'x-license-publicid': creds.licensePublicId }, writes[0]![2]);
  t.equal(bearer.status, 403);
});

t.test('a Build key of another license or another workspace gets 404 for these resources', async (t) => {
  const headers = { 'x-api-key': other.buildKey, 'x-license-publicid': other.licensePublicId };
  for (const [method, path, body] of writes) {
    const res = await call(method, path, headers, body);
    const expected = method === 'DELETE' && path === '/waas/activations' ? 204 : 404;
    t.equal(res.status, expected, `${method} ${path}`);
    if (expected === 404) t.equal(res.body.error.code, 'not_found');
  }
  for (const path of producerReads) t.equal((await call('GET', path, headers)).status, 404, `GET ${path}`);
  // Same license, a key bound to a different workspace.
  const second = (await sql`INSERT INTO workspaces (public_id, license_id, name) SELECT 'ten_secondworkspace0000', license_id, 'second' FROM workspaces WHERE public_id = ${T} RETURNING id`)[0]!;
  const { LicenseRepo } = await import('../../../../src/storage/license-repo.js');
  const licenseId = String((await sql`SELECT license_id FROM workspaces WHERE public_id = ${T}`)[0]!.license_id);
  const scoped = await new LicenseRepo(sql).createKey({ licenseId, workspaceId: String(second.id), profile: 'build' });
  const res = await call('GET', producerReads[0]!, { 'x-api-key': scoped.wire, 'x-license-publicid': creds.licensePublicId });
  t.equal(res.status, 404, 'a key scoped to another workspace of the same license');
});

t.test('console sessions: Owner and Admin write, Member reads, others see nothing', async (t) => {
  const ws = await wsId(T);
  await memberships.grant(ws, 'owner-1', 'Owner');
  await memberships.grant(ws, 'admin-1', 'Admin');
  await memberships.grant(ws, 'member-1', 'Member');
  const owner = signRs256(claimsFor('owner-1', ISS, AUD), rsa.privateKey, { kid: 'rsa-1' });
  const admin = signEs256(claimsFor('admin-1', ISS, AUD), ec.privateKey, { kid: 'ec-1' });
  const member = signHs256(claimsFor('member-1', ISS, AUD), SECRET);
  const stranger = signHs256(claimsFor('stranger-1', ISS, AUD), SECRET);
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  for (const [who, token] of [['Owner (RS256, JWKS)', owner], ['Admin (ES256, JWKS)', admin]] as const) {
    const res = await call('PUT', '/waas/streams', as(token), { producerTenantPublicId: T, name: `by-${who[0]}`, isPublic: true });
    t.equal(res.status, 200, `${who} applies a stream`);
    t.equal((await call('POST', `/waas/producer/${T}/packages`, as(token), { name: who })).status, 201, `${who} creates a package`);
  }
  t.ok(jwksFetches >= 1 && jwksFetches <= 2, `the JWKS was fetched and cached (${jwksFetches} fetch(es))`);
  for (const path of producerReads) t.equal((await call('GET', path, as(member))).status, 200, `Member reads ${path}`);
  for (const [method, path, body] of writes.slice(0, 14)) {
    const res = await call(method, path, as(member), body);
    t.equal(res.status, 403, `Member: ${method} ${path}`);
    t.equal(res.body?.error?.code, 'missing_permission');
  }
  for (const path of producerReads) t.equal((await call('GET', path, as(stranger))).status, 404, `a non-member: GET ${path}`);
  t.equal((await call('PUT', '/waas/streams', as(stranger), writes[0]![2])).status, 404, 'a non-member: write');
});

t.test('console tokens that do not verify are 401', async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const bad = {
    'wrong signature': signHs256(claimsFor('owner-1', ISS, AUD), 'not-the-secret'),
    expired: signHs256(claimsFor('owner-1', ISS, AUD, { exp: now - 3600 }), SECRET),
    'wrong audience': signHs256(claimsFor('owner-1', ISS, 'elsewhere'), SECRET),
    'wrong issuer': signRs256(claimsFor('owner-1', 'https://evil.test/', AUD), rsa.privateKey, { kid: 'rsa-1' }),
    'unknown kid': signRs256(claimsFor('owner-1', ISS, AUD), rsaKeys().privateKey, { kid: 'rsa-9' }),
    garbage: 'not.a.jwt',
  };
  for (const [what, token] of Object.entries(bad)) {
    const res = await call('GET', producerReads[0]!, { authorization: `Bearer ${token}` });
    t.equal(res.status, 401, what);
    t.equal(res.body.error.code, 'unauthorized');
  }
});

t.test('a console user accepts onto an account it administers, and is Owner of a new free account', async (t) => {
  const partnerOrg = await bootstrapDatabase(backends.databaseUrl);
  await memberships.grant(await wsId(partnerOrg.tenantPublicId), 'partner-admin', 'Admin');
  const token = signHs256(claimsFor('partner-admin', ISS, AUD), SECRET);
  const invite = await waas.invite('console@partner.test');
  const res = await api.request('POST', `/waas/integrations/${invite.publicId}/accept`, {
    body: { inviteToken: invite.inviteToken, licensePublicId: partnerOrg.licensePublicId },
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(res.status, 200);
  t.equal(res.body.licensePublicId, partnerOrg.licensePublicId);
  t.notOk('buildKey' in res.body, 'no key for an existing account');
  const subs = await api.request('POST', `/waas/integrations/${invite.publicId}/subscriptions`, {
    body: { catalogEntryPublicId: stream.publicId }, headers: { authorization: `Bearer ${token}` },
  });
  t.equal(subs.status, 201, 'the accepting user owns the new receiving workspace');

  const newcomer = signHs256(claimsFor('newcomer', ISS, AUD), SECRET);
  const invite2 = await waas.invite('newcomer@partner.test');
  const fresh = await api.request('POST', `/waas/integrations/${invite2.publicId}/accept`, {
    body: { inviteToken: invite2.inviteToken }, headers: { authorization: `Bearer ${newcomer}` },
  });
  t.equal(fresh.status, 200);
  t.match(fresh.body.buildKey, /^qak_/);
  const list = await api.request('GET', `/waas/integrations/${invite2.publicId}/subscriptions`, { headers: { authorization: `Bearer ${newcomer}` } });
  t.equal(list.status, 200, 'the console user is Owner of the new free account');

  const outsider = signHs256(claimsFor('outsider', ISS, AUD), SECRET);
  const invite3 = await waas.invite('outsider@partner.test');
  const refused = await api.request('POST', `/waas/integrations/${invite3.publicId}/accept`, {
    body: { inviteToken: invite3.inviteToken, licensePublicId: partnerOrg.licensePublicId }, headers: { authorization: `Bearer ${outsider}` },
  });
  t.equal(refused.status, 404, 'a user who administers nothing there');
});

t.test('a server without console configuration refuses bearer JWTs with 401', async (t) => {
  const plain = await startTestNode(t, backends, { roles: ['management'] });
  const res = await clientFor(plain.port, creds).request('GET', producerReads[0]!, {
    headers: { authorization: `Bearer ${signHs256(claimsFor('owner-1', ISS, AUD), SECRET)}` },
  });
  t.equal(res.status, 401);
  t.equal(res.body.error.code, 'unauthorized');
});

t.test('the /v1 configuration API takes the same console sessions', async (t) => {
  const ws = await wsId(T);
  await memberships.grant(ws, 'v1-owner', 'Owner');
  await memberships.grant(ws, 'v1-member', 'Member');
  const as = (sub: string) => ({ authorization: `Bearer ${signHs256(claimsFor(sub, ISS, AUD), SECRET)}` });
  const queue = `/v1/tenants/${T}/queues/console-made`;
  t.equal((await call('PUT', queue, as('v1-owner'), { groupKeyRequired: true })).status, 201, 'an Owner configures');
  t.equal((await call('GET', queue, as('v1-member'))).status, 200, 'a Member reads');
  const denied = await call('PUT', queue, as('v1-member'), {});
  t.equal(denied.status, 403, 'a Member cannot write');
  t.equal(denied.body?.error?.code, 'missing_permission');
  t.equal((await call('GET', queue, as('v1-stranger'))).status, 404, 'a non-member sees nothing');
  const key = await call('POST', `/v1/tenants/${T}/keys`, as('v1-owner'), { profile: 'build' });
  t.equal(key.status, 201, 'an Owner may create a build key');
});

t.test("console sessions on the receiving side: a Member lists the workspace's integrations, others see nothing", async (t) => {
  await memberships.grant(await wsId(partner.receivingTenantPublicId), 'partner-member', 'Member');
  const member = { authorization: `Bearer ${signHs256(claimsFor('partner-member', ISS, AUD), SECRET)}` };
  const stranger = { authorization: `Bearer ${signHs256(claimsFor('stranger-2', ISS, AUD), SECRET)}` };
  const byTenant = `/waas/integrations?receivingTenantPublicId=${partner.receivingTenantPublicId}`;
  const byLicense = `/waas/integrations?licensePublicId=${partner.api.creds.licensePublicId}`;
  for (const path of [byTenant, byLicense]) {
    const res = await call('GET', path, member);
    t.equal(res.status, 200, `Member: GET ${path}`);
    t.same(res.body.data.map((i: { integrationPublicId: string }) => i.integrationPublicId), [partner.integrationPublicId]);
    const none = await call('GET', path, stranger);
    t.equal(none.status, 404, `a non-member: GET ${path}`);
    t.equal(none.body.error.code, 'not_found');
  }
});
