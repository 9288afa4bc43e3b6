import t from 'tap';
import { waasTestbed } from '../../../helpers/waas-testbed.js';

// Packages and the state table of docs/api.md#resources-and-states, through the API against real
// Postgres and Redis: every Subscription row, as both the producer and the
// partner see the status. (waas-gate.test.ts shows the same rows in delivery.)
const { creds, api, waas } = await waasTestbed(t);
const pkgs = `/waas/producer/${creds.tenantPublicId}/packages`;

t.test('packages: create Active with a slug key unique per producer, rename keeps the key', async (t) => {
  const created = await api.manage('POST', pkgs, { name: 'Orders & Refunds', description: 'Money moves' });
  t.equal(created.status, 201);
  t.match(created.body, { publicId: /^pkg_/, key: 'orders-refunds', name: 'Orders & Refunds', description: 'Money moves', status: 'Active', streams: [] });
  const twin = await api.manage('POST', pkgs, { name: 'Orders  refunds' });
  t.equal(twin.body.key, 'orders-refunds-2', 'the same slug gets a suffix');
  t.equal(twin.body.description, null);
  const renamed = await api.manage('PUT', `${pkgs}/${created.body.publicId}`, { name: 'Payments' });
  t.equal(renamed.status, 200);
  t.match(renamed.body, { publicId: created.body.publicId, key: 'orders-refunds', name: 'Payments', description: 'Money moves', status: 'Active' },
    'PUT returns the package; the key stays; an absent description is kept');
  const cleared = await api.manage('PUT', `${pkgs}/${created.body.publicId}`, { name: 'Payments', description: null });
  t.equal(cleared.body.description, null, 'null clears the description');
  const bad = await api.manage('POST', pkgs, { name: '', extra: 1 });
  t.equal(bad.status, 400);
  t.same(bad.body.error.details.map((d: { field: string }) => d.field).sort(), ['extra', 'name']);
  t.equal((await api.manage('PUT', `${pkgs}/pkg_doesnotexist00000000`, { name: 'x' })).status, 404);
});

t.test('packages: add and remove streams (204, idempotent); the catalog lists memberships', async (t) => {
  const stream = await waas.putStream('shipments');
  const pkg = await waas.createPackage('Logistics');
  const add = () => api.manage('POST', `${pkgs}/${pkg.publicId}/streams`, { catalogEntryPublicId: stream.publicId });
  t.equal((await add()).status, 204);
  t.equal((await add()).status, 204, 'adding twice');
  const catalog = (await api.manage('GET', `/waas/producer/${creds.tenantPublicId}/catalog`)).body.data;
  t.same(catalog.find((i: { key: string }) => i.key === 'shipments').packages, [pkg.publicId]);
  const list = (await api.manage('GET', pkgs)).body.data.find((p: { publicId: string }) => p.publicId === pkg.publicId);
  t.same(list.streams, [stream.publicId]);
  const remove = () => api.manage('DELETE', `${pkgs}/${pkg.publicId}/streams/${stream.publicId}`);
  t.equal((await remove()).status, 204);
  t.equal((await remove()).status, 204, 'removing twice');
  t.equal((await api.manage('DELETE', `${pkgs}/pkg_doesnotexist00000000/streams/${stream.publicId}`)).status, 204, 'never 404');
  t.equal((await api.manage('POST', `${pkgs}/${pkg.publicId}/streams`, { catalogEntryPublicId: 'cat_doesnotexist000000' })).status, 404);
});

t.test('packages: archive (204, idempotent); archived packages refuse changes', async (t) => {
  const stream = await waas.putStream('archive-me');
  const pkg = await waas.createPackage('Old');
  t.equal((await api.manage('POST', `${pkgs}/${pkg.publicId}/archive`)).status, 204);
  t.equal((await api.manage('POST', `${pkgs}/${pkg.publicId}/archive`)).status, 204, 'archiving twice');
  const listed = (await api.manage('GET', pkgs)).body.data.find((p: { publicId: string }) => p.publicId === pkg.publicId);
  t.equal(listed.status, 'archived');
  const rename = await api.manage('PUT', `${pkgs}/${pkg.publicId}`, { name: 'New' });
  t.equal(rename.status, 409);
  t.equal(rename.body.error.code, 'conflict');
  t.equal((await api.manage('POST', `${pkgs}/${pkg.publicId}/streams`, { catalogEntryPublicId: stream.publicId })).status, 409);
  t.equal((await api.manage('POST', `${pkgs}/pkg_doesnotexist00000000/archive`)).status, 404);
});

t.test('state table, every Subscription row', async (t) => {
  const stream = await waas.putStream('ledger');
  const partner = await waas.newPartner('rows@partner.test');
  await waas.subscribe(partner, stream.publicId);
  const cat = stream.publicId;
  const both = async () => [await waas.status(partner, cat), await waas.partnerStatus(partner, cat)];
  const A = await waas.createPackage('Row A');
  const B = await waas.createPackage('Row B');

  t.same(await both(), ['live', 'live'], 'a new subscription is live');

  await waas.block(partner, 'streams', cat);
  t.same(await both(), ['paused', 'paused'], 'live → block of its stream → paused');

  await waas.unblock(partner, 'streams', cat);
  t.same(await both(), ['live', 'live'], 'paused → un-block of the stream, no package block → live');

  await waas.addToPackage(A.publicId, cat);
  t.same(await both(), ['live', 'live'], 'joining a package changes nothing (default-open)');
  await waas.block(partner, 'packages', A.publicId);
  t.same(await both(), ['paused', 'paused'], 'live → block of a package containing it → paused');

  await waas.block(partner, 'streams', cat);
  await waas.unblock(partner, 'streams', cat);
  t.same(await both(), ['paused', 'paused'], 'paused → un-block of the stream while a package block covers it → paused');

  await waas.unblock(partner, 'packages', A.publicId);
  t.same(await both(), ['live', 'live'], 'paused → un-block of the package, nothing covers it → live');

  await waas.block(partner, 'streams', cat);
  await waas.block(partner, 'packages', A.publicId);
  await waas.unblock(partner, 'packages', A.publicId);
  t.same(await both(), ['paused', 'paused'], 'paused → un-block of the package while the stream block remains → paused');
  await waas.unblock(partner, 'streams', cat);
  t.same(await both(), ['live', 'live']);

  await waas.addToPackage(B.publicId, cat);
  await waas.block(partner, 'packages', B.publicId);
  t.same(await both(), ['paused', 'paused'], 'a stream in two packages, one blocked → paused (the package block wins)');
  await waas.block(partner, 'packages', A.publicId);
  await waas.unblock(partner, 'packages', B.publicId);
  t.same(await both(), ['paused', 'paused'], 'un-blocking one package while another covers it → paused');
  await waas.unblock(partner, 'packages', A.publicId);
  t.same(await both(), ['live', 'live'], 'the last covering block gone → live');

  await waas.block(partner, 'packages', B.publicId);
  t.equal((await api.manage('DELETE', `${pkgs}/${B.publicId}/streams/${cat}`)).status, 204);
  t.same(await both(), ['live', 'live'], 'leaving a blocked package resumes');
  await waas.addToPackage(B.publicId, cat);
  t.same(await both(), ['paused', 'paused'], 'joining a blocked package pauses');
  t.equal((await api.manage('POST', `${pkgs}/${B.publicId}/archive`)).status, 204);
  t.same(await both(), ['paused', 'paused'], 'archiving a package does not lift its block');
  await waas.unblock(partner, 'packages', B.publicId);
  t.same(await both(), ['live', 'live'], 'but un-blocking it does');
});

t.test('blocks are idempotent; un-blocks never 404; unknown things to block are 404', async (t) => {
  const stream = await waas.putStream('idem');
  const partner = await waas.newPartner('idem@partner.test');
  const pkg = await waas.createPackage('Idem');
  for (const [kind, id] of [['streams', stream.publicId], ['packages', pkg.publicId]] as const) {
    const path = waas.blockPath(partner, kind, id);
    t.equal((await api.manage('POST', path)).status, 204, `block ${kind}`);
    t.equal((await api.manage('POST', path)).status, 204, `block ${kind} again`);
    t.equal((await api.manage('DELETE', path)).status, 204, `un-block ${kind}`);
    t.equal((await api.manage('DELETE', path)).status, 204, `un-block ${kind} again`);
  }
  t.equal((await api.manage('POST', waas.blockPath(partner, 'streams', 'cat_doesnotexist000000'))).status, 404);
  t.equal((await api.manage('POST', waas.blockPath(partner, 'packages', 'pkg_doesnotexist000000'))).status, 404);
  const ghost = { ...partner, integrationPublicId: 'int_doesnotexist000000' };
  t.equal((await api.manage('POST', waas.blockPath(ghost, 'streams', stream.publicId))).status, 404);
  t.equal((await api.manage('DELETE', waas.blockPath(ghost, 'streams', stream.publicId))).status, 204);
  t.equal((await api.manage('DELETE', waas.blockPath(partner, 'packages', 'pkg_doesnotexist000000'))).status, 204);
});

t.test('metrics series: the three histories and nothing else', async (t) => {
  const path = `/waas/producer/${creds.tenantPublicId}/metrics/series`;
  for (const [history, bucketSeconds, n] of [['1h', 60, 60], ['24h', 900, 96], ['7d', 3600, 168]] as const) {
    const res = await api.manage('GET', `${path}?history=${history}`);
    t.equal(res.status, 200, history);
    t.equal(res.body.history, history);
    t.equal(res.body.bucketSeconds, bucketSeconds);
    t.equal(res.body.series.length, n);
    t.match(res.body.series[0], { t: /^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/, accepted: 0, delivered: 0, failed: 0 });
  }
  for (const query of ['', '?history=', '?history=2h', '?history=1H', '?history=1h&history=7d', '?hist=1h', '?history=%E0']) {
    const res = await api.manage('GET', `${path}${query}`);
    t.equal(res.status, 400, `"${query}"`);
    t.equal(res.body.error.code, 'validation_failed');
    t.same(res.body.error.details, [{ field: 'history', problem: 'must be one of 1h, 24h, 7d' }]);
  }
});
