import { randomBytes } from 'node:crypto';
import t from 'tap';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { freshBackends } from '../../helpers/backends.js';
import { waitForEvent } from '../../helpers/delivery.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { Waas } from '../../helpers/waas.js';
import { toOpenApiPath } from '../../../src/api/openapi.js';

t.test('the served OpenAPI document describes exactly the routes the server registers', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const node = await startTestNode(t, backends);
  const res = await clientFor(node.port, creds).request('GET', '/openapi.json');
  t.equal(res.status, 200);
  t.equal(res.body.openapi, '3.1.0');
  // A maintained validator (the OpenAPI 3.1 schema, then $refs resolved): what code generators will read.
  const problems = await SwaggerParser.validate(structuredClone(res.body)).then(() => null, (err: Error) => err.message);
  t.equal(problems, null, 'the served document is valid OpenAPI 3.1');

  const methods = ['get', 'put', 'post', 'delete', 'patch'];
  const documented = new Set<string>();
  const singleNodeOnly = new Set<string>();
  for (const [path, item] of Object.entries(res.body.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) {
      if (!methods.includes(method)) continue;
      documented.add(`${method.toUpperCase()} ${path}`);
      if (item['x-single-node'] === true) singleNodeOnly.add(`${method.toUpperCase()} ${path}`);
    }
  }
  const registered = new Set(node.routes.map((r) => `${r.method} ${toOpenApiPath(r.pattern)}`));
  // Routes of single-machine mode are served only there (the test nodes turn it off).
  for (const route of singleNodeOnly) if (!registered.has(route)) documented.delete(route);
  t.same([...registered].filter((r) => !documented.has(r)).sort(), [], 'every registered route is documented');
  t.same([...documented].filter((r) => !registered.has(r)).sort(), [], 'every documented route is served');

  // What each route validates its JSON body with (RouteOptions.body) is what the document says it takes.
  const paths = res.body.paths as Record<string, Record<string, { requestBody?: { $ref?: string; content?: Record<string, unknown> } }>>;
  const bodies = res.body.components.requestBodies as Record<string, { content: { 'application/json': { schema: { $ref: string } } } }>;
  const schemas = res.body.components.schemas as Record<string, { title?: string; type?: string }>;
  const mismatches: string[] = [];
  for (const route of node.routes) {
    const op = paths[toOpenApiPath(route.pattern)]?.[route.method.toLowerCase()];
    if (!op) continue;
    const ref = op.requestBody?.$ref ?? null;
    const documented = ref?.replace('#/components/requestBodies/', '') ?? null;
    const jsonInline = op.requestBody?.content?.['application/json'] !== undefined;
    if (route.body === null && (documented !== null || jsonInline)) mismatches.push(`${route.method} ${route.pattern}: documented with a JSON body the route does not check`);
    if (route.body !== null && documented !== route.body) mismatches.push(`${route.method} ${route.pattern}: checks ${route.body}, documented ${documented ?? 'without it'}`);
    if (documented !== null) {
      const body = bodies[documented];
      const schema = schemas[documented];
      if (!body || !schema) mismatches.push(`${documented}: missing from components`);
      else if (schema.title !== documented || schema.type !== 'object') mismatches.push(`${documented}: components.schemas holds something else`);
    }
  }
  t.same(mismatches, [], 'every JSON request body is the schema the route validates with');
  t.ok(node.routes.filter((r) => r.body !== null).length >= 8, 'the management routes declare their bodies');
});

t.test('real answers match the schemas the document shows (every schema of an answer)', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  // With a key-encryption key: ed25519 signing keys can be made.
  const node = await startTestNode(t, backends, { signing: { keyEncryptionKey: randomBytes(32).toString('base64') } });
  const api = clientFor(node.port, creds);
  const doc = (await api.request('GET', '/openapi.json')).body;
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  const checked = new Set<string>();
  const check = (name: string, value: unknown) => {
    const validate = ajv.compile(doc.components.schemas[name]);
    t.ok(validate(value), `${name}: ${JSON.stringify(validate.errors)}`);
    // The schema is closed: the same answer with a field the code does not send fails it.
    t.notOk(validate({ ...(value as object), undocumented: 1 }), `${name} refuses a field it does not name`);
    checked.add(name);
  };
  /** Each item of a list answer (at least one: an empty list checks nothing). */
  const checkEach = (name: string, items: unknown) => {
    t.ok(Array.isArray(items) && items.length > 0, `${name}: a list with items`);
    for (const item of items as unknown[]) check(name, item);
  };
  const queue = await api.manage('PUT', api.tenantPath('/queues/full'), {
    authMode: 'payments', paymentsSecret: 'whsec_x', ipAllowlist: ['10.0.0.0/8'], groupKeyRequired: true,
    eventType: { source: 'body', name: 'type' }, mappedHeaders: [{ from: { source: 'body', name: 'c' }, as: 'X-C' }], outboundSigning: 'standard',
  });
  t.equal(queue.status, 201);
  check('Queue', queue.body);
  check('Queue', (await api.manage('PUT', api.tenantPath('/queues/plain'), {})).body);
  const target = await api.manage('PUT', api.tenantPath('/targets/full'), {
    url: 'http://127.0.0.1:9/hook', auth: { mode: 'oauth2', tokenUrl: 'http://127.0.0.1:9/token', clientId: 'c', clientSecret: 's', scope: 'a' },
    staticHeaders: { 'X-Env': 'prod' }, retryPolicy: { scheduleSeconds: [1, 5], horizonSeconds: 60, retryableStatuses: [409] }, maxConcurrency: 4, maxRatePerSecond: 2.5,
  });
  t.equal(target.status, 201);
  t.notOk('clientSecret' in target.body.auth, 'secrets are write-only');
  check('Target', target.body);
  check('Target', (await api.manage('PUT', api.tenantPath('/targets/plain'), { url: 'http://127.0.0.1:9/plain' })).body);
  check('Workspace', (await api.manage('GET', api.tenantPath(''))).body);
  const patched = await api.manage('PATCH', api.tenantPath(''), { ingress: { partitionKey: { source: 'query', name: 'p' } }, defaultAuthMode: 'signed_request' });
  t.equal(patched.status, 200);
  check('Workspace', patched.body);

  // API keys: one made (its secret shown once), the workspace's list (revoked ones included).
  const created = await api.manage('POST', api.tenantPath('/keys'), { profile: 'ingress', name: 'sender', queueScopes: ['orders'] });
  t.equal(created.status, 201, JSON.stringify(created.body));
  check('ApiKeyCreated', created.body);
  check('ApiKeyCreated', (await api.manage('POST', api.tenantPath('/keys'), {})).body);
  t.equal((await api.manage('DELETE', api.tenantPath(`/keys/${created.body.keyId}`))).status, 204);
  const keyList = (await api.manage('GET', api.tenantPath('/keys'))).body;
  const keys = keyList.data;
  t.ok(keys.some((k: { revokedAt: string | null }) => k.revokedAt !== null), 'a revoked key is listed');
  checkEach('ApiKey', keys);
  check('ApiKeyList', keyList);
  // The license's Home lists: its workspaces and its keys that are not revoked.
  const licenseWorkspaces = (await api.manage('GET', `/v1/licenses/${creds.licensePublicId}/workspaces`)).body;
  checkEach('LicenseWorkspace', licenseWorkspaces.items);
  check('LicenseWorkspaceList', licenseWorkspaces);
  const licenseKeys = (await api.manage('GET', `/v1/licenses/${creds.licensePublicId}/keys`)).body;
  checkEach('LicenseKey', licenseKeys.items);
  check('LicenseKeyList', licenseKeys);

  // An event delivered once, with its attempt; the queue's event list; the queue list (with states).
  const receiver = await startReceiver(t);
  await api.wire('orders', 'orders-target', `${receiver.url}/in`, { eventType: { source: 'body', name: 'type' } });
  const route = api.tenantPath('/queues/orders/targets/orders-target');
  const routedAgain = await api.manage('PUT', route);
  t.equal(routedAgain.status, 200, 'the route existed');
  check('RouteEnds', routedAgain.body);
  check('RouteEnds', (await api.manage('GET', route)).body);
  const posted = await api.postEvent('orders', '{"type":"order.created"}', { 'idempotency-key': 'k-1', 'x-service-partition-key': 'p-1' });
  t.equal(posted.status, 202);
  check('Accepted', posted.body);
  const replayed = await api.postEvent('orders', '{"type":"order.created"}', { 'idempotency-key': 'k-1', 'x-service-partition-key': 'p-1' });
  t.same([replayed.status, replayed.body.eventId, replayed.body.replayed], [202, posted.body.eventId, true], 'a duplicate key replays the first id');
  check('Accepted', replayed.body);
  const event = await waitForEvent(api, posted.body.eventId, (e) => e.deliveries[0]?.status === 'delivered' && e.deliveries[0].attempts.length > 0);
  t.equal(event.headers.length > 0 && event.retained, true, 'the GET of one event carries its content');
  check('Event', event);
  check('Delivery', event.deliveries[0]);
  check('Attempt', event.deliveries[0].attempts[0]);
  const listed = await api.manage('GET', api.tenantPath('/queues/orders/events'));
  t.equal(listed.status, 200);
  checkEach('EventListItem', listed.body.items);
  check('EventList', listed.body);
  // A sandbox run of one event (its attempt simulated), once delivery has picked it up.
  const sandboxed = await api.request('POST', `/events/sandbox/${creds.tenantPublicId}/orders?runId=run_openapi`, {
    raw: '{"type":"order.created"}', headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json' },
  });
  t.equal(sandboxed.status, 202, JSON.stringify(sandboxed.body));
  let run = await api.manage('GET', api.tenantPath('/sandbox/runs/run_openapi'));
  for (let i = 0; i < 200 && !(run.status === 200 && run.body.events[0]?.deliveries[0]?.status === 'delivered'); i++) {
    await new Promise((r) => setTimeout(r, 150));
    run = await api.manage('GET', api.tenantPath('/sandbox/runs/run_openapi'));
  }
  t.equal(run.body.events?.[0]?.deliveries[0]?.status, 'delivered', JSON.stringify(run.body));
  check('SandboxRun', run.body);
  t.equal(listed.body.items[0].targets[0]?.attempts, 1, 'the list counts the attempt');
  // The event sent again (after the list counted its one attempt).
  const again = await api.manage('POST', api.tenantPath(`/events/${posted.body.eventId}/redeliver`), { target: 'orders-target' });
  t.equal(again.status, 202, JSON.stringify(again.body));
  check('RedeliveryQueued', again.body);
  await api.manage('PUT', api.tenantPath('/queues/signed'), { authMode: 'signed_request' });
  const queues = await api.manage('GET', api.tenantPath('/queues'));
  t.ok(queues.body.items.some((q: { state: string }) => q.state === 'paused'), 'a paused queue is listed (with its reason)');
  checkEach('QueueWithState', queues.body.items);
  check('QueueList', queues.body);
  const targets = (await api.manage('GET', api.tenantPath('/targets'))).body;
  checkEach('Target', targets.items);
  check('TargetList', targets);
  const routes = (await api.manage('GET', api.tenantPath('/routes'))).body;
  t.same(routes.items.map((r: { queue: string; target: string }) => `${r.queue}>${r.target}`), ['orders>orders-target']);
  checkEach('Route', routes.items);
  check('RouteList', routes);
  check('QueueWithState', (await api.manage('POST', api.tenantPath('/queues/plain/archive'))).body);

  // Signing keys of both algorithms (after the queue list: an HMAC key resumes the paused queue), and the list of active ones.
  const hmacKey = await api.manage('POST', api.tenantPath('/signing-keys'));
  t.equal(hmacKey.status, 201, JSON.stringify(hmacKey.body));
  check('SigningKeyCreated', hmacKey.body);
  const edKey = await api.manage('POST', api.tenantPath('/signing-keys'), { algorithm: 'ed25519' });
  t.equal(edKey.status, 201, JSON.stringify(edKey.body));
  check('SigningKeyCreated', edKey.body);
  const signingKeys = (await api.manage('GET', api.tenantPath('/signing-keys'))).body;
  t.same(signingKeys.data.map((k: { algorithm: string }) => k.algorithm).sort(), ['ed25519', 'hmac-sha256']);
  checkEach('SigningKey', signingKeys.data);
  check('SigningKeyList', signingKeys);

  // A bulk redelivery job (a real one, over a range without failures: it has nothing to do).
  const now = Date.now();
  const range = { from: new Date(now - 3_600_000).toISOString(), to: new Date(now).toISOString() };
  const dryRun = await api.manage('POST', api.tenantPath('/targets/orders-target/redeliveries'), { ...range, dryRun: true });
  t.equal(dryRun.status, 200, JSON.stringify(dryRun.body));
  check('RedeliveryDryRun', dryRun.body);
  const started = await api.manage('POST', api.tenantPath('/targets/orders-target/redeliveries'), range);
  t.equal(started.status, 202, JSON.stringify(started.body));
  check('RedeliveryJobStarted', started.body);
  let job = (await api.manage('GET', api.tenantPath(`/redelivery-jobs/${started.body.jobId}`))).body;
  check('RedeliveryJob', job);
  for (let i = 0; i < 100 && job.status === 'running'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await api.manage('GET', api.tenantPath(`/redelivery-jobs/${started.body.jobId}`))).body;
  }
  t.equal(job.status, 'done');
  check('RedeliveryJob', job);
  // Target health and the activity feed (issue 26): the target's attempt counted, the key made and revoked above.
  const healthList = (await api.manage('GET', api.tenantPath('/target-health?window=24h'))).body;
  checkEach('TargetHealth', healthList.items);
  check('TargetHealthList', healthList);
  const feed = (await api.manage('GET', api.tenantPath('/activity'))).body;
  checkEach('ActivityEntry', feed.items);
  check('ActivityList', feed);

  // /waas: a stream in a package, a partner subscribed and activated, an invitation still pending.
  const waas = new Waas(api);
  const producer = `/waas/producer/${waas.tenant}`;
  const enabled = await api.manage('POST', '/waas/enable-producer', { producerTenantPublicId: waas.tenant });
  t.equal(enabled.status, 200);
  check('ProducerEnabled', enabled.body);
  const stream = await waas.putStream('shipments', { description: 'Parcels', eventTypes: ['shipment.sent'], payloadSchema: '{"type":"object"}' });
  check('StreamApplied', stream);
  const pkg = await api.manage('POST', `${producer}/packages`, { name: 'Logistics', description: 'Moves' });
  t.equal(pkg.status, 201);
  check('Package', pkg.body);
  await waas.addToPackage(pkg.body.publicId, stream.publicId);
  const packages = (await api.manage('GET', `${producer}/packages`)).body;
  checkEach('Package', packages.data);
  check('PackageList', packages);
  const catalogList = (await api.manage('GET', `${producer}/catalog`)).body;
  check('CatalogEntryList', catalogList);
  const catalog = catalogList.data;
  t.same(catalog[0]?.packages, [pkg.body.publicId]);
  checkEach('CatalogEntry', catalog);
  const partner = await waas.newPartner('partner@example.com');
  const invited = await api.manage('POST', '/waas/integrations', { producerTenantPublicId: waas.tenant, email: 'pending@example.com' });
  t.equal(invited.status, 201, JSON.stringify(invited.body));
  check('Invitation', invited.body);
  const reissued = await api.manage('POST', '/waas/integrations', { producerTenantPublicId: waas.tenant, email: 'pending@example.com' });
  t.same([reissued.status, reissued.body.publicId], [200, invited.body.publicId], 'a re-invite re-issues the Pending invitation');
  check('Invitation', reissued.body);
  const subscribed = await partner.api.manage('POST', `/waas/integrations/${partner.integrationPublicId}/subscriptions`, { catalogEntryPublicId: stream.publicId });
  t.equal(subscribed.status, 201);
  check('Subscription', subscribed.body);
  const subscriptions = (await partner.api.manage('GET', `/waas/integrations/${partner.integrationPublicId}/subscriptions`)).body;
  checkEach('Subscription', subscriptions.data);
  check('SubscriptionList', subscriptions);
  const integrationList = (await api.manage('GET', `${producer}/integrations`)).body;
  check('IntegrationList', integrationList);
  const integrations = integrationList.data;
  t.same(integrations.map((i: { status: string }) => i.status).sort(), ['Active', 'Pending']);
  checkEach('Integration', integrations);
  const activated = await api.manage('POST', '/waas/activations', { producerTenantPublicId: waas.tenant, groupKey: 'store-1', integrationPublicId: partner.integrationPublicId });
  t.equal(activated.status, 201);
  check('Activation', activated.body);
  const activations = (await api.manage('GET', `${producer}/activations`)).body;
  checkEach('Activation', activations.data);
  check('ActivationList', activations);
  // A stream block (pausing the partner's subscription) and a package block, read back.
  const blocks = `${producer}/integrations/${partner.integrationPublicId}/blocks`;
  t.equal((await api.manage('POST', `${blocks}/streams/${stream.publicId}`)).status, 204);
  t.equal((await api.manage('POST', `${blocks}/packages/${pkg.body.publicId}`)).status, 204);
  const blocked = await api.manage('GET', blocks);
  t.same([blocked.body.streams.length, blocked.body.packages.length, blocked.body.pausedSubscriptions.length], [1, 1, 1], JSON.stringify(blocked.body));
  check('IntegrationBlocks', blocked.body);
  // The partner's side: the integrations received into its workspace.
  const received = (await partner.api.manage('GET', `/waas/integrations?receivingTenantPublicId=${partner.receivingTenantPublicId}`)).body;
  checkEach('ReceivedIntegration', received.data);
  check('ReceivedIntegrationList', received);
  // An invitation accepted onto a new account (its Build key shown once).
  const another = await api.manage('POST', '/waas/integrations', { producerTenantPublicId: waas.tenant, email: 'another@example.com' });
  const accepted = await api.request('POST', `/waas/integrations/${another.body.publicId}/accept`, { body: { inviteToken: another.body.inviteToken } });
  t.equal(accepted.status, 200, JSON.stringify(accepted.body));
  t.ok(accepted.body.buildKey, 'a new account gets a Build key');
  check('IntegrationAccepted', accepted.body);
  const series = await api.manage('GET', `${producer}/metrics/series?history=1h`);
  t.equal(series.status, 200);
  t.equal(series.body.series.length > 0, true, 'zero-filled buckets');
  check('DistributionSeries', series.body);
  // The workspace's traffic (the overview), from the rollups.
  const stats = await api.manage('GET', api.tenantPath('/stats?window=1h'));
  t.equal(stats.status, 200);
  check('Stats', stats.body);

  // The sign-in page's config, and a console session (signed in with the Build key).
  const config = await api.request('GET', '/console/api/config');
  t.equal(config.status, 200);
  check('ConsoleConfig', config.body);
  const session = await api.request('POST', '/console/api/session', { body: { licensePublicId: creds.licensePublicId, key: creds.buildKey }, headers: { origin: api.baseUrl } });
  t.equal(session.status, 200, JSON.stringify(session.body));
  check('ConsoleSession', session.body);

  // Errors: one with field problems, one without details.
  const invalid = await api.manage('PUT', api.tenantPath('/queues/bad'), { authMode: 'nope', extra: 1 });
  t.equal(invalid.status, 400);
  t.ok(Array.isArray(invalid.body.error.details), 'validation_failed names its fields');
  check('Error', invalid.body);
  const missing = await api.manage('GET', api.tenantPath('/events/evt_doesnotexist'));
  t.equal(missing.status, 404);
  check('Error', missing.body);

  // Every schema of an answer in the document was checked against a real answer.
  const answerSchemas = Object.keys(doc.components.schemas).filter((name) => !(name in doc.components.requestBodies));
  t.same(answerSchemas.filter((name) => !checked.has(name)).sort(), [], 'every answer schema is checked');
});
