import t from 'tap';
import { forwardedHeaderProblem, isHeaderValue, routeCollisions, staticHeaderProblem } from '../../../src/routing/header-rules.js';

t.test('names that can never be forwarded', async (t) => {
  const never = ['X-Service-Anything', 'x-service-signature', 'Idempotency-Key', 'X-Idempotency-Key', 'X-Delivery-Key', 'Authorization',
    'Proxy-Authorization', 'Cookie', 'Set-Cookie', 'X-Api-Key', 'Host', 'Content-Type', 'Content-Length', 'Connection',
    'Transfer-Encoding', 'Expect', 'Upgrade', 'TE'];
  for (const name of never) t.ok(forwardedHeaderProblem(name, false), name);
  t.equal(forwardedHeaderProblem('X-Tier', false), null);
  t.equal(forwardedHeaderProblem('Payments-Signature', false), null, 'allowed without recalculation');
  t.match(forwardedHeaderProblem('Payments-Signature', true), /only the signing step writes it/, 'refused with recalculation on');
  t.match(forwardedHeaderProblem('bad name', false), /not a valid header name/);
});

t.test('static headers: the service\'s own names, Payments-Signature, Authorization and the transport names', async (t) => {
  t.match(staticHeaderProblem('X-Service-Event-Id', false), /cannot be a static header/);
  t.match(staticHeaderProblem('Idempotency-Key', false), /cannot be a static header/);
  t.match(staticHeaderProblem('X-Service-Key-Id', false), /collides with the service's own X-Service-\* headers/);
  t.match(staticHeaderProblem('content-type', false), /collides with a header the service sets itself/);
  t.match(staticHeaderProblem('Payments-Signature', false), /only the signing step writes it/);
  t.match(staticHeaderProblem('Content-Length', false), /transport/);
  t.match(staticHeaderProblem('Authorization', true), /Authorization header of the target's auth mode/);
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
