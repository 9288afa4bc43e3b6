import t from 'tap';
import SwaggerParser from '@apidevtools/swagger-parser';
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
});
