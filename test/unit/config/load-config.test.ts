import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

const dir = mkdtempSync(join(tmpdir(), 'streamgate-config-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function yamlFile(text: string): string {
  const file = join(dir, `config-${n++}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** What loadConfig throws for `env`, or null when it loads. */
function thrownBy(env: Record<string, string>): unknown {
  try {
    loadConfig(env);
    return null;
  } catch (err) {
    return err;
  }
}

t.test('defaults load with the documented values (docs/running.md)', async (t) => {
  const cfg = loadConfig({});
  t.equal(cfg.server.port, 8080);
  t.same(cfg.roles, ['ingress', 'delivery', 'management']);
  t.same(cfg.delivery.allowNetworks, [], 'no SSRF exceptions by default');
  t.equal(cfg.delivery.timeoutMs, 10_000, 'target timeoutMs default 10 000');
  t.equal(cfg.delivery.maxResponseBytes, 64 * 1024, 'reads at most 64 KiB');
  t.equal(cfg.ingress.keyMaxBytes, 255, 'key limit 255 bytes');
  // Nothing configured means single-machine mode: every backend embedded.
  t.equal(cfg.database.url, '', 'no DATABASE_URL: embedded PostgreSQL');
  t.equal(cfg.redis.url, '', 'no REDIS_URL: in-process cache');
  t.same(cfg.kafka.brokers, [], 'no KAFKA_BROKERS: embedded log');
  t.equal(cfg.dataDir, '.streamgate');
});

t.test('the loaded config is deeply frozen', async (t) => {
  const cfg = loadConfig({});
  t.ok(Object.isFrozen(cfg));
  t.ok(Object.isFrozen(cfg.server));
  t.ok(Object.isFrozen(cfg.kafka.producer), 'nested object');
  t.ok(Object.isFrozen(cfg.kafka.brokers), 'list');
  t.ok(Object.isFrozen(cfg.roles));
  t.throws(() => {
    (cfg.server as { port: number }).port = 1;
  }, TypeError);
  t.throws(() => (cfg.kafka.brokers as string[]).push('x:1'), TypeError);
  t.equal(loadConfig({}).server.port, 8080, 'a later load is unaffected');
});

t.test('environment overrides', async (t) => {
  const cfg = loadConfig({
    PORT: '9090',
    DATABASE_URL: 'postgresql://u:p@db.example:5433/sg',
    REDIS_URL: 'rediss://cache.example:6380',
    KAFKA_BROKERS: 'k1:9092, k2:9093,k3:9094',
    STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8,::1/128',
    LOG_LEVEL: 'debug',
  });
  t.equal(cfg.server.port, 9090);
  t.equal(cfg.database.url, 'postgresql://u:p@db.example:5433/sg');
  t.equal(cfg.redis.url, 'rediss://cache.example:6380');
  t.same(cfg.kafka.brokers, ['k1:9092', 'k2:9093', 'k3:9094'], 'comma-separated, trimmed');
  t.same(cfg.delivery.allowNetworks, ['127.0.0.0/8', '::1/128']);
  t.equal(cfg.log.level, 'debug');
  t.equal(cfg.server.host, loadConfig({}).server.host, 'untouched keys keep their defaults');
});

t.test('STREAMGATE_CONFIG file merges over the defaults', async (t) => {
  const file = yamlFile('server:\n  port: 7000\nkafka:\n  producer:\n    lingerMs: 9\nlog:\n  level: warn\n');
  const cfg = loadConfig({ STREAMGATE_CONFIG: file });
  t.equal(cfg.server.port, 7000);
  t.equal(cfg.kafka.producer.lingerMs, 9);
  t.equal(cfg.log.level, 'warn');
  const defaults = loadConfig({});
  t.equal(cfg.server.maxBodyBytes, defaults.server.maxBodyBytes, 'siblings in a merged section keep defaults');
  t.equal(cfg.kafka.producer.maxBatch, defaults.kafka.producer.maxBatch, 'deeply nested siblings too');
});

t.test('the environment wins over the file', async (t) => {
  const file = yamlFile('server:\n  port: 7000\nlog:\n  level: warn\nkafka:\n  brokers: ["f1:1"]\n');
  const cfg = loadConfig({ STREAMGATE_CONFIG: file, PORT: '7001', LOG_LEVEL: 'error', KAFKA_BROKERS: 'e1:2' });
  t.equal(cfg.server.port, 7001);
  t.equal(cfg.log.level, 'error');
  t.same(cfg.kafka.brokers, ['e1:2']);
});

t.test('an empty config file changes nothing', async (t) => {
  t.same(loadConfig({ STREAMGATE_CONFIG: yamlFile('# only a comment\n') }), loadConfig({}));
});

t.test('bad values throw ConfigError naming the key path', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'server.port'],
    [{ PORT: '70000' }, 'server.port'],
    [{ PORT: '-1' }, 'server.port'],
    [{ LOG_LEVEL: 'loud' }, 'log.level'],
    [{ STREAMGATE_ACCESS_LOG_SAMPLE_RATE: '1.5' }, 'log.accessLog.sampleRate'],
    [{ STREAMGATE_ACCESS_LOG_SAMPLE_RATE: 'half' }, 'log.accessLog.sampleRate'],
    [{ STREAMGATE_CONFIG: yamlFile('log:\n  accessLog:\n    sampleRate: -0.1\n') }, 'log.accessLog.sampleRate'],
    [{ KAFKA_BROKERS: 'nohostport' }, 'kafka.brokers'],
    [{ KAFKA_BROKERS: 'ok:9092,nohostport' }, 'kafka.brokers'],
    [{ DATABASE_URL: 'mysql://db/x' }, 'database.url'],
    [{ REDIS_URL: 'http://cache' }, 'redis.url'],
    [{ STREAMGATE_ALLOW_NETWORKS: 'everything' }, 'delivery.allowNetworks'],
    [{ STREAMGATE_CONFIG: yamlFile('bogus: 1\n') }, 'bogus'],
    [{ STREAMGATE_CONFIG: yamlFile('server:\n  prot: 8080\n') }, 'server.prot'],
    [{ STREAMGATE_CONFIG: yamlFile('server:\n  port: "8080"\n') }, 'server.port'],
    [{ STREAMGATE_CONFIG: yamlFile('roles: []\n') }, 'roles'],
    [{ STREAMGATE_CONFIG: yamlFile('roles: [ingress, frontend]\n') }, 'roles'],
    [{ STREAMGATE_CONFIG: yamlFile('server: 8080\n') }, 'server'],
  ];
  for (const [env, path] of cases) {
    const err = thrownBy(env);
    t.type(err, ConfigError, `${JSON.stringify(env)} → ConfigError`);
    t.ok(err instanceof ConfigError && err.message.includes(path), `message names ${path}: ${String(err)}`);
  }
});

t.test('each problem is one line, the key path and the rule in the words API answers use', async (t) => {
  const cases: Array<[Record<string, string>, string[]]> = [
    [{ PORT: 'abc' }, ['server.port: must be an integer']],
    [{ PORT: '70000' }, ['server.port: must be an integer from 0 to 65535']],
    [{ STREAMGATE_ACCESS_LOG_SAMPLE_RATE: '1.5' }, ['log.accessLog.sampleRate: must be a number from 0 to 1']],
    [{ LOG_LEVEL: 'loud' }, ['log.level: must be one of fatal, error, warn, info, debug, trace, silent']],
    [{ KAFKA_BROKERS: 'ok:9092,nohostport' }, ['kafka.brokers[1]: must be a broker as host:port, e.g. kafka-1:9092']],
    [{ DATABASE_URL: 'mysql://db/x' }, ['database.url: must be a postgres:// or postgresql:// URL, or "" for the embedded PostgreSQL']],
    [{ STREAMGATE_ALLOW_NETWORKS: '10.0.0.0/8,everything' }, ['delivery.allowNetworks[1]: must be a CIDR such as 127.0.0.0/8 (one host: 127.0.0.1/32)']],
    [{ STREAMGATE_CONFIG: yamlFile('bogus: 1\nserver:\n  prot: 8080\n') }, ['bogus: unknown setting', 'server.prot: unknown setting']],
    [{ STREAMGATE_CONFIG: yamlFile('server:\n  port: "8080"\n') }, ['server.port: must be an integer']],
    [{ STREAMGATE_CONFIG: yamlFile('server: 8080\n') }, ['server: must be an object']],
    [{ STREAMGATE_CONFIG: yamlFile('roles: []\n') }, ['roles: must have at least 1 item']],
    [{ STREAMGATE_CONFIG: yamlFile('roles: [ingress, frontend]\n') }, ['roles[1]: must be one of ingress, delivery, management']],
    [{ STREAMGATE_CONFIG: yamlFile('delivery:\n  retry:\n    scheduleSeconds: [5, -1, 1.5]\n') }, [
      'delivery.retry.scheduleSeconds[1]: must be an integer from 0 to 604800',
      'delivery.retry.scheduleSeconds[2]: must be an integer',
    ]],
  ];
  for (const [env, expected] of cases) {
    const err = thrownBy(env);
    t.same(err instanceof ConfigError ? err.problems : err, expected, JSON.stringify(env));
  }
});

t.test('log.accessLog.sampleRate: 0 by default, a fraction from the environment', async (t) => {
  t.equal(loadConfig({}).log.accessLog.sampleRate, 0);
  t.equal(loadConfig({ STREAMGATE_ACCESS_LOG_SAMPLE_RATE: '0.25' }).log.accessLog.sampleRate, 0.25);
  t.equal(loadConfig({ STREAMGATE_ACCESS_LOG_SAMPLE_RATE: '1' }).log.accessLog.sampleRate, 1);
});

t.test('every problem is reported at once', async (t) => {
  const err = thrownBy({ PORT: 'abc', LOG_LEVEL: 'loud' });
  if (!(err instanceof ConfigError)) return t.fail(`expected a ConfigError, got ${String(err)}`);
  t.ok(err.message.includes('server.port'));
  t.ok(err.message.includes('log.level'));
  t.ok(err.problems.length >= 2);
});

t.test('an unreadable or malformed config file is a ConfigError', async (t) => {
  t.type(thrownBy({ STREAMGATE_CONFIG: join(dir, 'does-not-exist.yaml') }), ConfigError, 'missing file');
  t.type(thrownBy({ STREAMGATE_CONFIG: yamlFile('- just\n- a list\n') }), ConfigError, 'top level is a list');
});

t.test('overrides (CLI flags) win over everything', async (t) => {
  const cfg = loadConfig({ PORT: '9000' }, { server: { port: 9001 }, roles: ['delivery'] });
  t.equal(cfg.server.port, 9001);
  t.same(cfg.roles, ['delivery']);
});

t.test('allowNetworks must be real CIDRs and PORT plain digits', async (t) => {
  for (const bad of ['10.0.0.0/33', '999.1.1.1/8', 'fe80::/129', '127.0.0.1']) {
    const err = thrownBy({ STREAMGATE_ALLOW_NETWORKS: bad });
    t.type(err, ConfigError, bad);
    t.match((err as Error).message, /delivery\.allowNetworks/, bad);
  }
  t.equal(thrownBy({ STREAMGATE_ALLOW_NETWORKS: '10.0.0.0/8,fd00::/8' }), null);
  t.type(thrownBy({ PORT: '0x1f90' }), ConfigError);
  t.equal(loadConfig({ PORT: '' }).server.port, 8080, 'an empty PORT means the default');
});

t.test('kafka.producer knobs: defaults, bounds, and an idempotency reservation that outlives the longest append', async (t) => {
  const p = loadConfig({}).kafka.producer;
  t.same([p.retryMs, p.requestTimeoutMs, p.connectTimeoutMs, p.maxBatchBytes], [30000, 30000, 5000, 900000], 'defaults');
  for (const [yaml, path] of [
    ['kafka:\n  producer:\n    retryMs: -1\n', 'kafka.producer.retryMs'],
    ['kafka:\n  producer:\n    requestTimeoutMs: 10\n', 'kafka.producer.requestTimeoutMs'],
    ['kafka:\n  producer:\n    maxBatchBytes: 10\n', 'kafka.producer.maxBatchBytes'],
    ['kafka:\n  producer:\n    connectTimeoutMs: 1.5\n', 'kafka.producer.connectTimeoutMs'],
  ] as const) {
    const err = thrownBy({ STREAMGATE_CONFIG: yamlFile(yaml) });
    t.match((err as Error | null)?.message, path, path);
  }
  const tooShort = yamlFile('ingress:\n  idempotencyPendingTtlMs: 60000\n');
  t.match((thrownBy({ STREAMGATE_CONFIG: tooShort, KAFKA_BROKERS: 'k:9092' }) as Error | null)?.message, /ingress\.idempotencyPendingTtlMs: must exceed .* 60000 ms/);
  t.equal(thrownBy({ STREAMGATE_CONFIG: tooShort }), null, 'no rule without Kafka (the embedded log appends at once)');
});

t.test('server.headerGuard was removed: a file or the environment that still sets it is refused, naming it', async (t) => {
  const envs: Array<Record<string, string>> = [{ STREAMGATE_CONFIG: yamlFile('server:\n  headerGuard: false\n') }, { STREAMGATE_HEADER_GUARD: 'true' }];
  for (const env of envs) {
    const err = thrownBy(env);
    t.type(err, ConfigError, JSON.stringify(Object.keys(env)));
    t.match((err as Error).message, /server\.headerGuard: .*was removed/);
  }
});

t.test('the slow-client deadlines have their documented defaults and bounds', async (t) => {
  const cfg = loadConfig({});
  t.same([cfg.server.headTimeoutMs, cfg.server.bodyTimeoutMs, cfg.server.idleTimeoutMs], [10_000, 30_000, 10_000]);
  t.match((thrownBy({ STREAMGATE_CONFIG: yamlFile('server:\n  headTimeoutMs: 10\n') }) as Error).message, /server\.headTimeoutMs: must be an integer from 1000 to 600000$/m);
});

t.test('retention.hours: 720 by default, decimals from the environment; the old embeddedLog.retentionHours is refused, saying where it went', async (t) => {
  t.equal(loadConfig({}).retention.hours, 720);
  t.equal(loadConfig({ STREAMGATE_RETENTION_HOURS: '0.02' }).retention.hours, 0.02, '72 s, for tests and soaks');
  t.match((thrownBy({ STREAMGATE_RETENTION_HOURS: 'a week' }) as Error).message, /retention\.hours: must be a number/);
  t.match((thrownBy({ STREAMGATE_RETENTION_HOURS: '0' }) as Error).message, /retention\.hours: must be a number from 0\.001 to 1000000$/m);
  const old = thrownBy({ STREAMGATE_CONFIG: yamlFile('embeddedLog:\n  retentionHours: 24\n') }) as Error;
  t.type(old, ConfigError);
  t.match(old.message, /embeddedLog\.retentionHours: moved to retention\.hours/);
});
