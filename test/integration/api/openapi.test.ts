import t from 'tap';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
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

t.test('real answers match the schemas the document shows (Workspace, Queue, Target)', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const node = await startTestNode(t, backends);
  const api = clientFor(node.port, creds);
  const doc = (await api.request('GET', '/openapi.json')).body;
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  const check = (name: string, value: unknown) => {
    const validate = ajv.compile(doc.components.schemas[name]);
    t.ok(validate(value), `${name}: ${JSON.stringify(validate.errors)}`);
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
});
