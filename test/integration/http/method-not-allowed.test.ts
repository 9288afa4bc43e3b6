import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';

/**
 * A known path asked with a method it does not serve answers 405
 * `method_not_allowed` with `Allow` (RFC 9110 §15.5.6); an unknown path stays 404.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);

for (const [method, path, allow] of [
  ['DELETE', `/events/${creds.tenantPublicId}/orders`, 'POST'],
  ['POST', '/healthz', 'GET, HEAD'],
  ['PATCH', api.tenantPath('/queues/orders'), 'DELETE, GET, HEAD, PUT'],
] as const) {
  t.test(`${method} ${path.replace(creds.tenantPublicId, '{t}')} → 405 with Allow: ${allow}`, async (t) => {
    const res = await api.request(method, path, { raw: '' });
    t.equal(res.status, 405);
    t.equal(res.headers.get('allow'), allow);
    t.equal(res.body.error?.code, 'method_not_allowed', JSON.stringify(res.body));
  });
}

t.test('an unknown path is still 404 not_found', async (t) => {
  const res = await api.request('GET', '/no/such/path');
  t.equal(res.status, 404);
});
