import t from 'tap';
import { untilUp, DependencyFailedError } from '../../../src/util/until-up.js';
import { createLogger } from '../../../src/observability/logger.js';
import { isRetriablePostgresError } from '../../../src/storage/db-failure.js';
import { isRetriableRedisError } from '../../../src/cache/redis-failure.js';

const log = createLogger('silent');
const errno = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });

t.test('waits out retriable failures, telling what it waits for, then returns the value', async (t) => {
  const reasons: string[] = [];
  let n = 0;
  const value = await untilUp('postgres', async () => {
    if (++n < 3) throw errno('ECONNREFUSED');
    return 'migrated';
  }, { retriable: () => true, describe: (e) => (e as Error).message, onWait: (r) => reasons.push(r), signal: new AbortController().signal, log });
  t.equal(value, 'migrated');
  t.same(reasons, ['waiting for postgres: connect ECONNREFUSED 127.0.0.1:1', 'waiting for postgres: connect ECONNREFUSED 127.0.0.1:1']);
});

t.test('an error waiting cannot fix is thrown at once, as `fatal` makes it', async (t) => {
  let n = 0;
  const err = await untilUp('postgres', async () => {
    n++;
    throw Object.assign(new Error('password authentication failed for user "x"'), { code: '28P01' });
  }, {
    retriable: isRetriablePostgresError,
    describe: (e) => (e as Error).message,
    fatal: (e) => new DependencyFailedError(`Postgres: ${(e as Error).message}`),
    onWait: () => {},
    signal: new AbortController().signal,
    log,
  }).catch((e: Error) => e);
  t.equal(n, 1);
  t.equal((err as Error).name, 'DependencyFailedError');
  t.equal((err as Error).message, 'Postgres: password authentication failed for user "x"');
});

t.test('stopping the node ends the wait', async (t) => {
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 50);
  const err = await untilUp('kafka', async () => {
    throw errno('ECONNREFUSED');
  }, { retriable: () => true, describe: String, onWait: () => {}, signal: stop.signal, log }).catch((e: Error) => e);
  t.equal((err as Error).name, 'AbortError');
});

t.test('Postgres: unreachable, starting or full is waited out; a refused login, a missing database or bad SQL is not', async (t) => {
  for (const code of ['ECONNREFUSED', 'ETIMEDOUT', 'ENOTFOUND', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', '57P03', '08006', '53300']) {
    t.ok(isRetriablePostgresError({ code }), `${code} waits`);
  }
  t.ok(isRetriablePostgresError(Object.assign(new AggregateError([errno('ECONNREFUSED'), errno('ECONNREFUSED')]), {})), 'every address refused');
  for (const code of ['28P01', '28000', '3D000', '42601', 'SELF_SIGNED_CERT_IN_CHAIN']) {
    t.notOk(isRetriablePostgresError({ code }), `${code} stops the start`);
  }
  t.notOk(isRetriablePostgresError(new Error('no code')));
});

t.test('Redis: a refused login or certificate stops the start; the rest is waited out', async (t) => {
  const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
  t.notOk(isRetriableRedisError(reply('WRONGPASS invalid username-password pair or user is disabled.')));
  t.notOk(isRetriableRedisError(reply('NOAUTH Authentication required.')));
  t.notOk(isRetriableRedisError({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }));
  t.ok(isRetriableRedisError(errno('ECONNREFUSED')));
  t.ok(isRetriableRedisError(Object.assign(new Error('Reached the max retries per request limit (which is 3).'), { name: 'MaxRetriesPerRequestError' })));
  t.ok(isRetriableRedisError(reply('LOADING Redis is loading the dataset in memory')));
});
