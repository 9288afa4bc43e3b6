import t from 'tap';
import { freshBackends } from '../../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../../helpers/nodes.js';
import { connectDatabase } from '../../../../src/storage/db.js';

// PUT /waas/streams, rules 1–5 of docs/api.md, the no-op re-apply, and the
// catalog, against real Postgres and Redis (management only: no delivery here).
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { roles: ['management'] });
const api = clientFor(node.port, creds);
const sql = connectDatabase(backends.databaseUrl, 2);
t.teardown(() => sql.end());
// The cluster's config version: bumped by every write that invalidates caches.
const configVersion = () => node.configVersion();
const put = (body: Record<string, unknown>) => api.manage('PUT', '/waas/streams', { producerTenantPublicId: creds.tenantPublicId, ...body });

t.test('rule 1: one call promotes the workspace, makes the queue Public with header extraction, and upserts the catalog entry', async (t) => {
  const [before] = await sql`SELECT is_producer FROM workspaces WHERE public_id = ${creds.tenantPublicId}`;
  t.equal(before!.is_producer, false, 'not a producer yet');
  const res = await put({ name: 'orders', description: 'Order events', eventTypes: ['order.created', 'order.paid'], isPublic: true });
  t.equal(res.status, 200);
  t.match(res.body, { publicId: /^cat_[A-Za-z0-9_-]{22}$/, key: 'orders', status: 'Published' });
  const [after] = await sql`SELECT is_producer FROM workspaces WHERE public_id = ${creds.tenantPublicId}`;
  t.equal(after!.is_producer, true, 'promoted to producer');
  const queue = await api.manage('GET', api.tenantPath('/queues/orders'));
  t.equal(queue.status, 200, 'the queue named after the stream exists');
  t.match(queue.body, {
    public: true,
    authMode: 'api_key',
    eventType: { source: 'header', name: 'x-service-event-type' },
    groupKey: { source: 'header', name: 'x-service-group-key' },
  });
  const catalog = await api.manage('GET', `/waas/producer/${creds.tenantPublicId}/catalog`);
  t.equal(catalog.status, 200);
  t.same(catalog.body.data, [{
    publicId: res.body.publicId, key: 'orders', name: 'orders', description: 'Order events',
    eventTypes: ['order.created', 'order.paid'], payloadSchema: null, status: 'Published', packages: [],
  }]);
});

t.test('re-applying an unchanged stream is a no-op: same publicId, nothing written, no invalidation', async (t) => {
  const body = { name: 'invoices', description: 'd', eventTypes: ['invoice.sent'], payloadSchema: '{"type":"object"}', isPublic: true };
  const first = await put(body);
  t.equal(first.headers.get('x-streamgate-change'), 'changed');
  const stamp = async () => (await sql`
    SELECT c.updated_at AS c, q.updated_at AS q FROM catalog_entries c JOIN queues q ON q.id = c.queue_id WHERE c.public_id = ${first.body.publicId}`)[0];
  const before = await stamp();
  const version = await configVersion();
  const again = await put(body);
  t.equal(again.status, 200);
  t.equal(again.body.publicId, first.body.publicId, 'same publicId');
  t.equal(again.headers.get('x-streamgate-change'), 'unchanged');
  t.same(await stamp(), before, 'neither the entry nor the queue was rewritten');
  t.equal(await configVersion(), version, 'no cache invalidation was published');
  const changed = await put({ ...body, description: 'new words' });
  t.equal(changed.body.publicId, first.body.publicId, 'a change keeps the publicId');
  t.equal(changed.headers.get('x-streamgate-change'), 'changed');
  t.ok((await configVersion()) > version, 'a real change invalidates caches');
});

t.test('rule 2: a queue the call creates requires an API key, unless the workspace demands a signed request', async (t) => {
  await put({ name: 'keyed', isPublic: true });
  t.equal((await api.manage('GET', api.tenantPath('/queues/keyed'))).body.authMode, 'api_key');
  await sql`UPDATE workspaces SET settings = '{"defaultAuthMode":"signed_request"}' WHERE public_id = ${creds.tenantPublicId}`;
  t.teardown(() => sql`UPDATE workspaces SET settings = '{}' WHERE public_id = ${creds.tenantPublicId}`.then(() => {}));
  await put({ name: 'signed', isPublic: true });
  t.equal((await api.manage('GET', api.tenantPath('/queues/signed'))).body.authMode, 'signed_request', 'the workspace demand is kept');
});

t.test('rule 3: an existing queue keeps its authentication (and an extraction source set explicitly)', async (t) => {
  t.equal((await api.manage('PUT', api.tenantPath('/queues/legacy'), { groupKeyRequired: true })).status, 201);
  // Set what the /v1 API cannot set yet: a signed-request queue taking its group key from the body.
  await sql`
    UPDATE queues SET settings = settings || '{"authMode":"signed_request","groupKey":{"source":"body","name":"customer"}}'::jsonb
    WHERE name = 'legacy'`;
  const res = await put({ name: 'legacy', isPublic: true });
  t.equal(res.status, 200);
  const queue = (await api.manage('GET', api.tenantPath('/queues/legacy'))).body;
  t.equal(queue.authMode, 'signed_request', 'auth untouched');
  t.same(queue.groupKey, { source: 'body', name: 'customer' }, 'explicit source untouched');
  t.same(queue.eventType, { source: 'header', name: 'x-service-event-type' }, 'the missing one configured');
  t.equal(queue.public, true, 'made Public');
  t.equal(queue.groupKeyRequired, true, 'other settings untouched');
});

t.test('rule 4: payloadSchema is opaque and stored verbatim', async (t) => {
  const schema = '  {"$schema": "https://json-schema.org/draft/2020-12/schema",\n\t"type":"object" ,"x":"é\\u00e9 🙂"}\n// not even JSON';
  const res = await put({ name: 'verbatim', payloadSchema: schema, isPublic: true });
  t.equal(res.status, 200);
  const item = (await api.manage('GET', `/waas/producer/${creds.tenantPublicId}/catalog`)).body.data.find((i: { key: string }) => i.key === 'verbatim');
  t.equal(item.payloadSchema, schema, 'byte for byte');
  const [row] = await sql`SELECT payload_schema FROM catalog_entries WHERE public_id = ${res.body.publicId}`;
  t.equal(row!.payload_schema, schema);
  const notString = await put({ name: 'verbatim', payloadSchema: { type: 'object' } });
  t.equal(notString.status, 400, 'a non-string schema is refused, not re-serialised');
  t.same(notString.body.error.details.map((d: { field: string }) => d.field), ['payloadSchema']);
});

t.test('rule 5: isPublic true gives Published, false or absent gives Deprecated (and leaves the catalog)', async (t) => {
  const published = await put({ name: 'flip', isPublic: true });
  t.equal(published.body.status, 'Published');
  const hidden = await put({ name: 'flip', isPublic: false });
  t.equal(hidden.body.status, 'Deprecated');
  t.equal(hidden.body.publicId, published.body.publicId);
  const absent = await put({ name: 'flip' });
  t.equal(absent.body.status, 'Deprecated');
  t.equal(absent.headers.get('x-streamgate-change'), 'unchanged', 'false and absent are the same desired state');
  const keys = (await api.manage('GET', `/waas/producer/${creds.tenantPublicId}/catalog`)).body.data.map((i: { key: string }) => i.key);
  t.notOk(keys.includes('flip'), 'the catalog lists Published streams only');
  t.equal((await put({ name: 'flip', isPublic: true })).body.status, 'Published', 'and back');
});

t.test('POST /waas/enable-producer is idempotent', async (t) => {
  const other = await bootstrapDatabase(backends.databaseUrl);
  const otherApi = clientFor(node.port, other);
  for (let i = 0; i < 2; i++) {
    const res = await otherApi.manage('POST', '/waas/enable-producer', { producerTenantPublicId: other.tenantPublicId });
    t.equal(res.status, 200);
    t.same(res.body, { tenantPublicId: other.tenantPublicId, isProducer: true });
  }
  const [row] = await sql`SELECT is_producer FROM workspaces WHERE public_id = ${other.tenantPublicId}`;
  t.equal(row!.is_producer, true);
});

t.test('bad bodies get 400 validation_failed naming each field', async (t) => {
  const res = await api.manage('PUT', '/waas/streams', { name: 'bad name!', eventTypes: ['ok', 3], isPublic: 'yes', colour: 'red' });
  t.equal(res.status, 400);
  t.equal(res.body.error.code, 'validation_failed');
  t.same(res.body.error.details.map((d: { field: string }) => d.field).sort(), ['colour', 'eventTypes[1]', 'isPublic', 'name', 'producerTenantPublicId']);
  const dup = await put({ name: 'dup', eventTypes: ['a', 'a'] });
  t.equal(dup.status, 400);
  t.equal(dup.body.error.code, 'validation_failed');
  t.same(dup.body.error.details.map((d: { field: string }) => d.field), ['eventTypes'], 'a repeated type names the list');
  const notJson = await api.request('PUT', '/waas/streams', {
    raw: '{"name":', headers: { 'content-type': 'application/json', 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId },
  });
  t.equal(notJson.status, 400);
  t.equal(notJson.body.error.code, 'validation_failed');
  const text = await api.request('PUT', '/waas/streams', {
    raw: 'name=x', headers: { 'content-type': 'text/plain', 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId },
  });
  t.equal(text.status, 415);
  t.equal(text.body.error.code, 'unsupported_media_type');
});

t.test('two concurrent applies of a new stream make one queue and one entry', async (t) => {
  const results = await Promise.all(Array.from({ length: 8 }, () => put({ name: 'race', isPublic: true })));
  t.ok(results.every((r) => r.status === 200), 'all answered 200');
  t.equal(new Set(results.map((r) => r.body.publicId)).size, 1, 'one publicId');
  const [n] = await sql`SELECT count(*)::int AS n FROM catalog_entries WHERE name = 'race'`;
  t.equal(n!.n, 1);
});
