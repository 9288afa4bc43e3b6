import t from 'tap';
import { ServiceError } from '../../../../src/errors.js';
import { checkRouteHeaders, readTarget } from '../../../../src/api/v1/target-input.js';

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
  t.same(found.map((p) => p.field).sort(), [
    'auth.mode', 'groupKeyHeader', 'retryPolicy.horizonSeconds', 'retryPolicy.scheduleSeconds', 'staticHeaders.Idempotency-Key', 'staticHeaders.x-ok',
  ], 'shape problems and header rules in one answer');
  const rules = problems({ staticHeaders: { 'Idempotency-Key': 'x', 'X-Ok': 'y', 'x-ok': 'z' }, groupKeyHeader: 'Cookie' });
  t.same(rules.map((p) => p.field).sort(), ['groupKeyHeader', 'staticHeaders.Idempotency-Key', 'staticHeaders.x-ok'], 'the header rules alone');
  t.same(problems({ url: 42, groupKeyHeader: 'Cookie' }).map((p) => p.field).sort(), ['groupKeyHeader', 'url'], 'a broken required field does not hide the rules');
  t.same(problems({ staticHeaders: { 'X-Ok': 'a\r\nb' }, timeoutMs: 5, extra: true }).map((p) => p.field).sort(), ['extra', 'staticHeaders.X-Ok', 'timeoutMs']);
  t.match(problems({ timeoutMs: 5 }), [{ field: 'timeoutMs', problem: 'must be an integer from 100 to 600000' }]);
  t.same(problems({ timeoutMs: null, maxConcurrency: null, maxRatePerSecond: null }), [], 'null is "not given"');
});

t.test('auth shapes', async (t) => {
  t.same(problems({ auth: { mode: 'bearer' } }), [{ field: 'auth.token', problem: 'is required' }]);
  t.match(problems({ auth: { mode: 'bearer', token: 'a\nb' } }), [{ field: 'auth.token', problem: /no CR, LF/ }]);
  t.match(problems({ auth: { mode: 'basic', username: 'a:b', password: 'p' } }), [{ field: 'auth.username', problem: /":"/ }]);
  t.same(problems({ auth: { mode: 'oauth2', tokenUrl: 'https://x', clientId: 'c' } }), [{ field: 'auth.clientSecret', problem: 'is required' }]);
  t.same(problems({ auth: { mode: 'magic' } }), [{ field: 'auth.mode', problem: 'must be one of none, bearer, basic, oauth2' }]);
  t.same(problems({ auth: 'bearer' }), [{ field: 'auth', problem: 'must be an object' }]);
  t.same(problems({ auth: { mode: 'none' } }), []);
});

t.test('retryPolicy bounds', async (t) => {
  const policy = (retryPolicy: unknown) => readTarget({ url: 'https://r.example/', retryPolicy }).settings.retryPolicy;
  t.same(policy({ scheduleSeconds: [0, 5], horizonSeconds: 0, retryableStatuses: [409, 404, 409] }), { scheduleSeconds: [0, 5], horizonSeconds: 0, retryableStatuses: [404, 409] });
  t.same(problems({ retryPolicy: { scheduleSeconds: [1], horizonSeconds: 31 * 86_400 } }), [{ field: 'retryPolicy.horizonSeconds', problem: 'must be an integer from 0 to 2592000' }]);
  t.same(problems({ retryPolicy: { scheduleSeconds: Array(51).fill(1), horizonSeconds: 1 } }), [{ field: 'retryPolicy.scheduleSeconds', problem: 'must be a list of 1 to 50 integers from 0 to 604800' }]);
  t.same(problems({ retryPolicy: { scheduleSeconds: [8 * 86_400, -1], horizonSeconds: 1 } }), [{ field: 'retryPolicy.scheduleSeconds', problem: 'must be a list of 1 to 50 integers from 0 to 604800' }], 'one sentence for the list');
  t.match(problems({ retryPolicy: { scheduleSeconds: [1], horizonSeconds: 1, retryableStatuses: [404, 410] } }), [{ field: 'retryPolicy.retryableStatuses', problem: /other than 410/ }]);
  t.same(problems({ retryPolicy: [1, 2] }), [{ field: 'retryPolicy', problem: 'must be an object' }]);
});

t.test('route collisions throw validation_failed', async (t) => {
  t.throws(() => checkRouteHeaders([{ mappedHeaders: [{ from: { source: 'header', name: 'a' }, as: 'X-A', required: false }] }], { staticHeaders: { 'x-a': '1' } }), { code: 'validation_failed' });
  t.doesNotThrow(() => checkRouteHeaders([{}], { staticHeaders: { 'x-a': '1' } }));
});
