import t from 'tap';
import { dependencyFailure, isDependencyFailure } from '../../../src/util/dependency-failure.js';
import { CacheUnavailableError } from '../../../src/cache/cache-unavailable.js';
import { ServiceError } from '../../../src/errors.js';

// A dependency that is away is 503 unavailable, never 500; our own bugs and bad requests are not.
t.test('connection failures of postgres.js and the cache are unavailable', async (t) => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', '57P01', '57P03', '08006', '53300']) {
    const err = Object.assign(new Error('x'), { code });
    t.ok(isDependencyFailure(err), code);
    const answer = dependencyFailure(err)!;
    t.equal(answer.code, 'unavailable');
    t.equal(answer.status, 503);
  }
  t.equal(dependencyFailure(new CacheUnavailableError('redis is not connected'))?.status, 503, 'the cache');
});

t.test('anything else is not', async (t) => {
  for (const err of [new Error('boom'), Object.assign(new Error('x'), { code: '23505' }), Object.assign(new Error('x'), { code: '42P01' }), new ServiceError('conflict'), null, 'text', { code: 7 }]) {
    t.equal(dependencyFailure(err), null, JSON.stringify(err) ?? String(err));
  }
});
