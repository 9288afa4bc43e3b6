import t from 'tap';
import { ServiceError } from '../../../../src/errors.js';
import { checkRouteHeaders, readRetryPolicy, readTarget } from '../../../../src/api/v1/target-input.js';

const problems = (body: Record<string, unknown>) => {
  try {
    readTarget({ url: 'https://r.example/', ...body });
    return [];
  } catch (err) {
    if (!(err instanceof ServiceError) || err.code !== 'validation_failed') throw err;
    return err.details as Array<{ field: string; problem: string }>;
  }
};

t.test('a full target reads back as settings', async (t) => {
  const { url, settings } = readTarget({
    url: 'https://r.example/h',
    timeoutMs: 2500,
    auth: { mode: 'oauth2', tokenUrl: 'https://auth.example/token', clientId: 'c', clientSecret: 's', scope: 'a b' },
    staticHeaders: { 'X-Env': 'prod' },
    groupKeyHeader: 'X-Group',
    retryPolicy: { scheduleSeconds: [1, 2], horizonSeconds: 60 },
  });
  t.equal(url, 'https://r.example/h');
  t.same(settings, {
    timeoutMs: 2500,
    auth: { mode: 'oauth2', tokenUrl: 'https://auth.example/token', clientId: 'c', clientSecret: 's', scope: 'a b' },
    staticHeaders: { 'X-Env': 'prod' },
    groupKeyHeader: 'X-Group',
    retryPolicy: { scheduleSeconds: [1, 2], horizonSeconds: 60, retryableStatuses: [] },
  });
});

t.test('every bad field is named at once', async (t) => {
  const found = problems({ staticHeaders: { 'Idempotency-Key': 'x', 'X-Ok': 'y', 'x-ok': 'z' }, groupKeyHeader: 'Cookie', retryPolicy: { scheduleSeconds: [] }, auth: { mode: 'magic' } });
  t.same(found.map((p) => p.field).sort(), ['auth', 'groupKeyHeader', 'retryPolicy', 'staticHeaders.Idempotency-Key', 'staticHeaders.x-ok'].sort());
});

t.test('auth shapes', async (t) => {
  t.match(problems({ auth: { mode: 'bearer' } }), [{ field: 'auth', problem: /token/ }]);
  t.match(problems({ auth: { mode: 'bearer', token: 'a\nb' } }), [{ field: 'auth' }]);
  t.match(problems({ auth: { mode: 'basic', username: 'a:b', password: 'p' } }), [{ field: 'auth', problem: /":"/ }]);
  t.match(problems({ auth: { mode: 'oauth2', tokenUrl: 'https://x', clientId: 'c' } }), [{ field: 'auth' }]);
  t.same(problems({ auth: { mode: 'none' } }), []);
});

t.test('retryPolicy bounds', async (t) => {
  t.same(readRetryPolicy({ scheduleSeconds: [0, 5], horizonSeconds: 0, retryableStatuses: [409, 404] }), { scheduleSeconds: [0, 5], horizonSeconds: 0, retryableStatuses: [404, 409] });
  t.type(readRetryPolicy({ scheduleSeconds: [1], horizonSeconds: 31 * 86_400 }), 'string');
  t.type(readRetryPolicy({ scheduleSeconds: Array(51).fill(1), horizonSeconds: 1 }), 'string');
  t.type(readRetryPolicy({ scheduleSeconds: [8 * 86_400], horizonSeconds: 1 }), 'string');
  t.type(readRetryPolicy([1, 2]), 'string');
});

t.test('route collisions throw validation_failed', async (t) => {
  t.throws(() => checkRouteHeaders([{ mappedHeaders: [{ from: { source: 'header', name: 'a' }, as: 'X-A', required: false }] }], { staticHeaders: { 'x-a': '1' } }), { code: 'validation_failed' });
  t.doesNotThrow(() => checkRouteHeaders([{}], { staticHeaders: { 'x-a': '1' } }));
});
