import t from 'tap';
import { ConfigError, loadConfig } from '../../../../src/config/load-config.js';
import { planThreads } from '../../../../src/node/threads/thread-count.js';

const cluster = { DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://r:6379', KAFKA_BROKERS: 'k:9092' };

t.test('server.threads: 0 by default (every core), STREAMGATE_THREADS sets it, bad values name the key', async (t) => {
  t.equal(loadConfig({}, {}).server.threads, 0);
  t.equal(loadConfig({ STREAMGATE_THREADS: '3' }, {}).server.threads, 3);
  for (const bad of ['-1', 'two', '257']) {
    let err: unknown = null;
    try {
      loadConfig({ STREAMGATE_THREADS: bad }, {});
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof ConfigError && err.message.includes('server.threads'), `${bad}: refused, naming server.threads`);
  }
});

t.test('0 means the cores the process may use; 1 is one thread', async (t) => {
  t.equal(planThreads(loadConfig(cluster, {}), 6).threads, 6);
  t.equal(planThreads(loadConfig({ ...cluster, STREAMGATE_THREADS: '1' }, {}), 6).threads, 1);
  t.equal(planThreads(loadConfig({ ...cluster, STREAMGATE_THREADS: '4' }, {}), 2).threads, 4, 'asked by number: taken as asked');
});

t.test('the embedded backends keep one thread and say why', async (t) => {
  for (const missing of ['KAFKA_BROKERS', 'REDIS_URL', 'DATABASE_URL'] as const) {
    const env: Record<string, string> = { ...cluster, STREAMGATE_THREADS: '2' };
    delete env[missing];
    const plan = planThreads(loadConfig(env, {}), 2);
    t.equal(plan.threads, 1, `without ${missing}`);
    t.match(plan.singleBecause, /embedded/);
  }
});
