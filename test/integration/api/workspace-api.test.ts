import t from 'tap';
import { loadConfig } from '../../../src/config/load-config.js';
import { bootstrap } from '../../../src/api/setup/bootstrap.js';
import { ApiClient } from '../../helpers/api-client.js';
import { freshBackends } from '../../helpers/backends.js';
import { testDatabase, waitForEvent } from '../../helpers/delivery.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';

/**
 * The workspace itself (GET/PATCH /v1/tenants/{tenant}, …/archive, …/restore):
 * where queues that name no source read the event type, group key and
 * partition key, the default auth mode of stream queues, and archiving the
 * whole workspace (every queue answers 409 queue_archived until restored).
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);
const sql = await testDatabase(t, backends);
const other = new ApiClient(api.baseUrl, await bootstrap(sql, 'other-ws@example.test'));
const path = api.tenantPath('');

t.test('the workspace as it is: not archived, the default sources, api_key', async (t) => {
  const res = await api.manage('GET', path);
  t.equal(res.status, 200);
  t.match(res.body, {
    publicId: creds.tenantPublicId,
    licensePublicId: creds.licensePublicId,
    archived: false,
    ingress: { eventType: null, groupKey: null, partitionKey: null },
    defaultAuthMode: 'api_key',
  });
});

t.test('workspace sources: a queue that names none reads its partition key where the workspace says; null goes back to the header', async (t) => {
  const receiver = await startReceiver(t);
  await api.wire('ws-src', 'ws-src-target', `${receiver.url}/src`);
  const set = await api.manage('PATCH', path, { ingress: { partitionKey: { source: 'body', name: 'customer' }, eventType: { source: 'query', name: 'type' } } });
  t.equal(set.status, 200, JSON.stringify(set.body));
  t.same(set.body.ingress, { eventType: { source: 'query', name: 'type' }, groupKey: null, partitionKey: { source: 'body', name: 'customer' } });
  const posted = await api.request('POST', `/events/${creds.tenantPublicId}/ws-src?type=order.created`, {
    raw: '{"customer":"c-42"}',
    headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json', 'x-service-partition-key': 'from-header' },
  });
  t.equal(posted.status, 202, JSON.stringify(posted.body));
  const event = await waitForEvent(api, posted.body.eventId, (e) => e.deliveries[0]?.status === 'delivered');
  t.equal(event.partitionKey, 'c-42', 'from the body field the workspace names, not the header');
  t.equal(event.eventType, 'order.created', 'from the query parameter');

  const cleared = await api.manage('PATCH', path, { ingress: { partitionKey: null } });
  t.same(cleared.body.ingress, { eventType: { source: 'query', name: 'type' }, groupKey: null, partitionKey: null }, 'only that one cleared');
  const again = await api.postEvent('ws-src', '{"customer":"c-42"}', { 'x-service-partition-key': 'from-header' });
  const second = await waitForEvent(api, again.body.eventId, (e) => e.deliveries[0]?.status === 'delivered');
  t.equal(second.partitionKey, 'from-header', 'back to the X-Service-Partition-Key header at once (caches invalidated)');
  t.equal((await api.manage('PATCH', path, { ingress: null })).body.ingress.eventType, null, 'ingress: null clears every source');
});

t.test('bad bodies name each bad field; other writers are refused', async (t) => {
  const bad = await api.manage('PATCH', path, { ingress: { partitionKey: { source: 'cookie', name: 'x' }, color: 'red' }, defaultAuthMode: 'payments', extra: 1 });
  t.equal(bad.status, 400);
  t.equal(bad.body.error.code, 'validation_failed');
  t.same(bad.body.error.details.map((d: { field: string }) => d.field).sort(), ['defaultAuthMode', 'extra', 'ingress.color', 'ingress.partitionKey.source']);
  const ingressKey = await api.request('PATCH', path, { headers: { 'x-api-key': creds.ingressKey, 'x-license-publicid': creds.licensePublicId }, body: { defaultAuthMode: 'signed_request' } });
  t.equal(ingressKey.status, 403, 'an ingress key reads, never writes');
  const stranger = await other.manage('PATCH', path, { defaultAuthMode: 'signed_request' });
  t.equal(stranger.status, 404, "another license's key: no such workspace");
  t.equal((await other.manage('POST', `${path}/archive`)).status, 404);
  t.equal((await api.manage('GET', path)).body.defaultAuthMode, 'api_key', 'nothing changed');
  const mode = await api.manage('PATCH', path, { defaultAuthMode: 'signed_request' });
  t.equal(mode.body.defaultAuthMode, 'signed_request');
  t.equal((await api.manage('PATCH', path, { defaultAuthMode: null })).body.defaultAuthMode, 'api_key', 'null: back to api_key');
});

t.test('an archived workspace takes no events on any queue until restored; archive and restore are idempotent', async (t) => {
  await api.wire('ws-arch', 'ws-arch-target', `${(await startReceiver(t)).url}/arch`);
  t.equal((await api.postEvent('ws-arch', '{}')).status, 202);
  const archived = await api.manage('POST', `${path}/archive`);
  t.equal(archived.status, 200);
  t.equal(archived.body.archived, true);
  t.equal((await api.manage('POST', `${path}/archive`)).status, 200, 'again: 200');
  const refused = await api.postEvent('ws-arch', '{}');
  t.equal(refused.status, 409);
  t.equal(refused.body.error.code, 'queue_archived');
  const queues = await api.manage('GET', api.tenantPath('/queues'));
  t.match(queues.body.items.find((q: { name: string }) => q.name === 'ws-arch'), { state: 'archived' }, 'its queues show archived');
  const restored = await api.manage('POST', `${path}/restore`);
  t.equal(restored.body.archived, false);
  t.equal((await api.postEvent('ws-arch', '{}')).status, 202, 'takes events again');
});

t.test('a workspace may keep its events for less than the service, never more', async (t) => {
  const SERVICE_RETENTION_HOURS = loadConfig({}, {}).retention.hours;
  t.equal((await api.manage('GET', path)).body.retentionHours, null, "none of its own: the service's retention.hours");
  const set = await api.manage('PATCH', path, { retentionHours: 0.5 });
  t.equal(set.status, 200);
  t.equal(set.body.retentionHours, 0.5);
  t.equal((await api.manage('GET', path)).body.retentionHours, 0.5, 'stored');
  const [row] = await sql<{ h: number }[]>`SELECT retention_hours::float8 AS h FROM workspaces WHERE public_id = ${creds.tenantPublicId}`;
  t.equal(row!.h, 0.5, 'where the retention sweep reads it');
  for (const bad of [0, -1, 'soon', SERVICE_RETENTION_HOURS + 1]) {
    const res = await api.manage('PATCH', path, { retentionHours: bad });
    t.equal(res.status, 400, JSON.stringify(bad));
    t.match(res.body.error.details, [{ field: 'retentionHours' }]);
  }
  t.match((await api.manage('PATCH', path, { retentionHours: SERVICE_RETENTION_HOURS + 1 })).body.error.details[0].problem, /at most .*retention\.hours/);
  t.equal((await api.manage('GET', path)).body.retentionHours, 0.5, 'a refused change changes nothing');
  t.equal((await api.manage('PATCH', path, { retentionHours: null })).body.retentionHours, null, "null: back to the service's");
});
