import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { backendConfig, backendEnv, freshBackends, REDIS_URL, TEST_BACKEND, TEST_PARTITIONS, type Backends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, freePort, startFailure, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';
import { startKafkaProxy } from '../../helpers/kafka-proxy.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { createLogger } from '../../../src/observability/logger.js';
import { listenNode, type ListeningNode } from '../../../src/node/node.js';
import type { ReadinessReport } from '../../../src/observability/readiness.js';

/**
 * /livez and /readyz as an orchestrator sees them: /readyz names the
 * dependency a node lost (a TCP proxy between the node and Postgres, Redis or
 * Kafka is cut; the shared services keep running) and turns ready again when
 * it is back; a node whose dependency is away at start listens, answers the
 * probes and 503 `unavailable` on its routes, and serves once it comes.
 */
const ADMIN_BASE = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_TARGET = `${new URL(ADMIN_BASE).hostname}:${new URL(ADMIN_BASE).port || '5432'}`;
const REDIS_TARGET = `${new URL(REDIS_URL).hostname}:${new URL(REDIS_URL).port || '6379'}`;
const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));
/** Fast rounds, so a test sees a change within a second or two. */
const HEALTH = { health: { intervalMs: 200, timeoutMs: 1000 } };

interface Probe {
  status: number;
  body: ReadinessReport;
}

async function readyz(port: number): Promise<Probe> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, body: (await res.json()) as ReadinessReport };
}

/** Polls /readyz until `accept` holds; fails the test with the last answer after `timeoutMs`. */
async function until(t: Test, port: number, what: string, accept: (p: Probe) => boolean, timeoutMs = 10_000): Promise<Probe> {
  const deadline = Date.now() + timeoutMs;
  let last: Probe | null = null;
  while (Date.now() < deadline) {
    try {
      last = await readyz(port);
      if (accept(last)) {
        t.pass(what);
        return last;
      }
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  t.fail(`${what} (within ${timeoutMs} ms)`, { last: JSON.stringify(last?.body) });
  throw new Error(`gave up waiting: ${what}`);
}

const failing = (name: string) => (p: Probe) => p.status === 503 && p.body.status === 'not_ready' && p.body.checks[name]?.ok === false;
const ready = (p: Probe) => p.status === 200 && p.body.status === 'ready';

/** A node started through the CLI's path: listening at once, its roles up when the backends are. */
async function listening(t: Test, backends: Backends, extra: Record<string, unknown>): Promise<ListeningNode> {
  const config = loadConfig({}, backendConfig(backends, { ...HEALTH, ...extra }));
  const node = await listenNode(config, createLogger(config.log.level));
  t.teardown(() => node.stop());
  // Observed by the test below; a failure here must not become an unhandled rejection first.
  node.up.catch(() => {});
  return node;
}

/** Every dependency this backend setup uses, with how to route a node through a proxy to it. */
const dependencies: Array<{ name: string; proxy: (t: Test) => Promise<TcpProxy>; config: (b: Backends, proxy: TcpProxy) => Record<string, unknown>; cause: RegExp }> = [
  {
    name: 'postgres',
    proxy: (t) => TcpProxy.start(t, PG_TARGET),
    config: (b, proxy) => ({ database: { url: proxy.rewrite(b.databaseUrl), maxConnections: 5 } }),
    cause: /ECONNREFUSED|CONNECTION_CLOSED|CONNECT_TIMEOUT|ECONNRESET|terminat/,
  },
];
if (TEST_BACKEND === 'kafka') {
  dependencies.push(
    {
      name: 'redis',
      proxy: (t) => TcpProxy.start(t, REDIS_TARGET),
      config: (b, proxy) => ({ redis: { url: proxy.rewrite(REDIS_URL), keyPrefix: b.redisPrefix } }),
      cause: /ECONNREFUSED|Connection is closed|ECONNRESET/,
    },
    {
      name: 'kafka',
      proxy: (t) => startKafkaProxy(t),
      config: (b, proxy) => ({ kafka: { ...(backendConfig(b).kafka as Record<string, unknown>), brokers: [proxy.address] } }),
      cause: /connection refused|ECONNREFUSED|closed the connection|timed out|no answer/,
    },
  );
}

t.test('/livez and /healthz answer 200 without looking at anything; /readyz lists every check of the roles', async (t) => {
  const backends = await freshBackends(t);
  await bootstrapDatabase(backends.databaseUrl);
  const node = await startTestNode(t, backends, HEALTH);
  for (const path of ['/livez', '/healthz']) {
    const res = await fetch(`http://127.0.0.1:${node.port}${path}`);
    t.equal(res.status, 200, path);
    t.same(await res.json(), { status: 'ok' });
  }
  const probe = await readyz(node.port);
  t.equal(probe.status, 200);
  t.equal(probe.body.status, 'ready');
  t.same([...probe.body.roles].sort(), ['delivery', 'ingress', 'management']);
  const expected = TEST_BACKEND === 'kafka' ? ['consumerGroup', 'kafka', 'postgres', 'redis', 'startup'] : ['consumerGroup', 'postgres', 'startup'];
  t.same(Object.keys(probe.body.checks).sort(), expected, 'one check per dependency of the roles');
  for (const [name, check] of Object.entries(probe.body.checks)) {
    t.equal(check.ok, true, `${name} ok`);
    if (name !== 'startup') t.type(check.latencyMs, 'number', `${name} says how long it took`);
  }
  t.equal(probe.body.checks.consumerGroup!.partitions, TEST_PARTITIONS, 'the only delivery node holds every partition');

  // Draining (what SIGTERM does first): 503 whatever the checks say.
  node.readiness.setDraining();
  const draining = await readyz(node.port);
  t.equal(draining.status, 503);
  t.equal(draining.body.status, 'draining');
  t.equal((await fetch(`http://127.0.0.1:${node.port}/livez`)).status, 200, 'still alive while draining');
});

t.test('a flood of /readyz probes does not run the checks: they answer from the last round', async (t) => {
  const backends = await freshBackends(t);
  await bootstrapDatabase(backends.databaseUrl);
  // One round a minute: every probe within it sees the same latencies.
  const node = await startTestNode(t, backends, { health: { intervalMs: 60_000, timeoutMs: 1000 } });
  const answers = await Promise.all(Array.from({ length: 200 }, () => readyz(node.port)));
  t.ok(answers.every((a) => a.status === 200), '200 probes, all ready');
  const latencies = new Set(answers.map((a) => a.body.checks.postgres!.latencyMs));
  t.equal(latencies.size, 1, 'one Postgres check for all of them');
});

for (const dep of dependencies) {
  for (const mode of ['refuse', 'blackhole'] as const) {
  t.test(`a ready node whose ${dep.name} link is cut (${mode}) answers /readyz 503 naming it, and 200 once it is back`, async (t) => {
    const backends = await freshBackends(t);
    const creds = await bootstrapDatabase(backends.databaseUrl);
    const receiver = await startReceiver(t);
    const proxy = await dep.proxy(t);
    const node = await startTestNode(t, backends, { ...HEALTH, ...dep.config(backends, proxy) });
    await until(t, node.port, 'ready before the cut', ready);
    await proxy.cut(mode);
    const down = await until(t, node.port, `503 naming ${dep.name}`, failing(dep.name));
    // A silent link is named by the check's timeout (Redis: its own command timeout,
    // redis.commandTimeoutMs, is shorter, or, when another command of the node timed out
    // first, the reconnect that started); a refused one by the connection's error.
    const cause = mode === 'blackhole' ? /no answer within 1000 ms|redis unavailable: Command timed out|redis stopped answering/ : dep.cause;
    t.match(down.body.checks[dep.name]!.error, cause, `the cause: ${down.body.checks[dep.name]!.error}`);
    if (dep.name === 'kafka') {
      const lost = await until(t, node.port, 'the consumer-group membership is lost with it', (p) => p.body.checks.consumerGroup?.ok === false);
      t.ok(lost.body.checks.consumerGroup!.error, `consumerGroup: ${lost.body.checks.consumerGroup!.error}`);
    }
    for (const [name, check] of Object.entries(down.body.checks)) {
      // The consumer group depends on Kafka: it may fail with it.
      if (name !== dep.name && !(dep.name === 'kafka' && name === 'consumerGroup')) t.equal(check.ok, true, `${name} unaffected`);
    }
    t.equal((await fetch(`http://127.0.0.1:${node.port}/livez`)).status, 200, 'alive all along');
    await proxy.restore();
    await until(t, node.port, 'ready again after the restore', ready, dep.name === 'kafka' ? 30_000 : 10_000);

    // Ready means working: an event posted now is accepted and delivered.
    const api = clientFor(node.port, creds);
    await api.wire('after', 'after-target', `${receiver.url}/in`);
    const accepted = await api.postEvent('after', JSON.stringify({ after: mode }));
    t.equal(accepted.status, 202, 'an event is accepted');
    await receiver.waitFor((r) => r.length >= 1, 30_000, 'the event delivered');
    t.same(receiver.eventIds(), [accepted.body.eventId]);
  });
  }

  t.test(`a node started while ${dep.name} is unreachable listens, says why it is not ready, and serves once it comes`, async (t) => {
    const backends = await freshBackends(t);
    const creds = await bootstrapDatabase(backends.databaseUrl);
    const receiver = await startReceiver(t);
    const proxy = await dep.proxy(t);
    await proxy.cut('refuse');
    const node = await listening(t, backends, dep.config(backends, proxy));
    const live = await fetch(`http://127.0.0.1:${node.port}/livez`);
    t.equal(live.status, 200, '/livez 200 while the dependency is away');
    const waiting = await until(t, node.port, `503 naming ${dep.name}`, (p) =>
      failing(dep.name)(p) && p.body.checks[dep.name]!.error !== 'not checked yet' && /^waiting for/.test(String(p.body.checks.startup?.error)),
    );
    t.match(waiting.body.checks[dep.name]!.error, dep.cause, `the cause: ${waiting.body.checks[dep.name]!.error}`);
    t.match(waiting.body.checks.startup!.error, new RegExp(`waiting for ${dep.name}`), `startup: ${waiting.body.checks.startup!.error}`);

    // The roles' routes answer at once, with the catalog's 503, never 500 or a hang.
    const api = clientFor(node.port, creds);
    const ingress = await api.postEvent('q', '{}');
    t.equal(ingress.status, 503, 'ingress: 503');
    t.equal(ingress.body.error.code, 'unavailable');
    const management = await api.manage('GET', api.tenantPath('/queues'));
    t.equal(management.status, 503, 'management: 503');
    t.equal(management.body.error.code, 'unavailable');
    t.equal((await fetch(`http://127.0.0.1:${node.port}/openapi.json`)).status, 200, 'the API document is served meanwhile');

    await sleep(1_000);
    t.equal((await readyz(node.port)).status, 503, 'still not ready a second later');
    await proxy.restore();
    const running = await Promise.race([node.up, sleep(30_000).then(() => null)]);
    t.ok(running, 'the roles came up once the dependency answered');
    await until(t, node.port, 'ready', ready);

    await api.wire('late', 'late-target', `${receiver.url}/in`);
    const accepted = await api.postEvent('late', JSON.stringify({ late: true }));
    t.equal(accepted.status, 202, 'an event is accepted');
    await receiver.waitFor((r) => r.length >= 1, 30_000, 'the event delivered');
    t.same(receiver.eventIds(), [accepted.body.eventId]);
  });
}

t.test('delivery readiness includes consumer-group membership', async (t) => {
  const backends = await freshBackends(t);
  await bootstrapDatabase(backends.databaseUrl);
  const first = await startTestNode(t, backends, HEALTH);
  const p1 = await until(t, first.port, 'the delivery node is a member', (p) => ready(p) && p.body.checks.consumerGroup?.ok === true);
  t.equal(p1.body.checks.consumerGroup!.partitions, TEST_PARTITIONS);

  const ingressOnly = await startTestNode(t, backends, { ...HEALTH, roles: ['ingress', 'management'] });
  const p2 = await readyz(ingressOnly.port);
  t.equal(p2.status, 200);
  t.notOk('consumerGroup' in p2.body.checks, 'no membership check where no delivery role runs');
  if (TEST_BACKEND !== 'kafka') return;

  // A second delivery node joins the group: the partitions are split between the two members.
  const second = await startTestNode(t, backends, { ...HEALTH, roles: ['delivery'] });
  await until(t, second.port, 'the second node holds part of the partitions', (p) => {
    const mine = p.body.checks.consumerGroup;
    return ready(p) && mine?.ok === true && (mine.partitions as number) > 0 && (mine.partitions as number) < TEST_PARTITIONS;
  }, 30_000);
  const split = await until(t, first.port, 'the first node gave some up', (p) => (p.body.checks.consumerGroup?.partitions as number) < TEST_PARTITIONS, 30_000);
  const theirs = (await readyz(second.port)).body.checks.consumerGroup!.partitions as number;
  t.equal((split.body.checks.consumerGroup!.partitions as number) + theirs, TEST_PARTITIONS, 'every partition has one owner');
});

t.test('a misconfiguration still stops the start, with one line', async (t) => {
  const backends = await freshBackends(t);
  const missing = new URL(backends.databaseUrl);
  missing.pathname = '/sg_no_such_database';
  const config = loadConfig({}, backendConfig(backends, { database: { url: missing.toString() } }));
  const started = Date.now();
  const outcome = await startFailure(config);
  t.equal(outcome?.name, 'DependencyFailedError');
  t.match(outcome?.message, /^Postgres: database "sg_no_such_database" does not exist$/);
  t.ok(Date.now() - started < 15_000, 'at once, not after retries');
});

t.test('streamgate start: a database away keeps the process up and unready until it comes; a database that does not exist exits with one line', async (t) => {
  const backends = await freshBackends(t);
  await bootstrapDatabase(backends.databaseUrl);
  const proxy = await TcpProxy.start(t, PG_TARGET);
  await proxy.cut('refuse');
  const port = await freePort();
  const env = { ...process.env, ...backendEnv(backends, port), DATABASE_URL: proxy.rewrite(backends.databaseUrl), LOG_LEVEL: 'silent' };
  const child = spawn(process.execPath, [CLI, 'start'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const down = await until(t, port, 'the process listens and answers 503 naming postgres', (p) => failing('postgres')(p) && /^waiting for postgres/.test(String(p.body.checks.startup?.error)), 30_000);
  t.match(down.body.checks.postgres!.error, /ECONNREFUSED/);
  await sleep(2_000);
  t.equal(child.exitCode, null, 'still running two seconds later');
  await proxy.restore();
  await until(t, port, 'ready once the database answers', ready, 30_000);
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM stops it cleanly');

  const missing = new URL(backends.databaseUrl);
  missing.pathname = '/sg_no_such_database';
  const bad = spawn(process.execPath, [CLI, 'start'], {
    env: { ...env, PORT: String(await freePort()), DATABASE_URL: missing.toString() },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.teardown(() => void bad.kill('SIGKILL'));
  let stderr = '';
  bad.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => bad.once('exit', (c) => resolve(c)));
  t.equal(code, 1, 'exits 1');
  t.equal(stderr, 'streamgate: Postgres: database "sg_no_such_database" does not exist\n', 'one line naming the dependency and the cause');
});
