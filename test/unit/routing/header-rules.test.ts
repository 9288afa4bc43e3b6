import t from 'tap';
import { forwardedHeaderProblem, isHeaderValue, routeCollisions, staticHeaderProblem } from '../../../src/routing/header-rules.js';

t.test('names that can never be forwarded (reference §6)', async (t) => {
  const never = ['X-Service-Anything', 'x-service-signature', 'Idempotency-Key', 'X-Idempotency-Key', 'X-Delivery-Key', 'Authorization',
    'Proxy-Authorization', 'Cookie', 'Set-Cookie', 'X-Api-Key', 'Host', 'Content-Type', 'Content-Length', 'Connection',
    'Transfer-Encoding', 'Expect', 'Upgrade', 'TE'];
  for (const name of never) t.ok(forwardedHeaderProblem(name, false), name);
  t.equal(forwardedHeaderProblem('X-Tier', false), null);
  t.equal(forwardedHeaderProblem('Payments-Signature', false), null, 'allowed without recalculation');
  t.match(forwardedHeaderProblem('Payments-Signature', true), /rule 3/, 'refused with recalculation on');
  t.match(forwardedHeaderProblem('bad name', false), /not a valid header name/);
});

t.test('static headers: rules 1-3 and the transport names', async (t) => {
  t.match(staticHeaderProblem('X-Service-Event-Id', false), /rule 2/);
  t.match(staticHeaderProblem('Idempotency-Key', false), /rule 2/);
  t.match(staticHeaderProblem('X-Service-Key-Id', false), /rule 1/);
  t.match(staticHeaderProblem('content-type', false), /rule 1/);
  t.match(staticHeaderProblem('Payments-Signature', false), /rule 3/);
  t.match(staticHeaderProblem('Content-Length', false), /transport/);
  t.match(staticHeaderProblem('Authorization', true), /rule 1/);
  t.equal(staticHeaderProblem('Authorization', false), null);
  t.equal(staticHeaderProblem('X-Env', false), null);
});

t.test('collisions across a route', async (t) => {
  t.same(routeCollisions(['X-Tier'], { staticHeaders: { 'x-tier': 'v' } }).length, 1);
  t.same(routeCollisions(['X-Tier'], { staticHeaders: {}, groupKeyHeader: 'X-TIER' }).length, 1);
  t.same(routeCollisions(['X-Tier'], { staticHeaders: { 'X-Other': 'v' }, groupKeyHeader: 'X-Group' }), []);
});

t.test('header values node:http can send', async (t) => {
  t.ok(isHeaderValue('plain value\twith tab'));
  t.ok(isHeaderValue('café'), 'Latin-1');
  t.notOk(isHeaderValue('a\nb'));
  t.notOk(isHeaderValue('a\0b'));
  t.notOk(isHeaderValue('☃'));
});
