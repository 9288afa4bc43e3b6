/**
 * `node bench/recovery.mjs` (dist/ built): how streamgate recovers, under a
 * steady load, from a Kafka broker killed and restarted and from a delivery
 * node killed (issue 12), against a PRIVATE broker this bench starts, kills
 * and deletes (config/infra/up.sh with moved ports and run dir; the shared
 * broker on 9092 is never touched):
 *
 *   paced load (open loop, N ev/s, K keys) ──► ingress ──► private broker ──► delivery ──► recording receiver
 *        every request: seq, key, sent/answered, status, event id        every delivery: id, seq, arrival
 *
 *   broker   one node with every role; SIGKILL the broker after the warm-up, start it
 *            again BENCH_OUTAGE_S later (up.sh), probe Metadata every 50 ms: time from the
 *            broker answering to the first delivery (any, and of an event sent after it);
 *            ingress status codes per phase; lost; duplicates against what was in flight
 *   broker-long  the same with BENCH_LONG_OUTAGE_S (40 s: longer than kafka.producer.retryMs
 *            and the consumer session timeout; the "731 duplicates" case)
 *   node     ingress node + two `--roles delivery` nodes in one group; SIGKILL one: per
 *            partition it held, time from the kill to the first delivery of an event sent
 *            after the kill; lost; duplicates against what was uncommitted
 *
 * Options (env): BENCH_SCENARIOS (broker,broker-long,node), BENCH_OUTAGE_S (10),
 * BENCH_LONG_OUTAGE_S (40), BENCH_RATE (300 ev/s), BENCH_KEYS (48), BENCH_BODY_BYTES (512),
 * BENCH_WARMUP_S (10: load before each kill), BENCH_AFTER_S (10: load after the broker
 * answers again), BENCH_NODE_OBSERVE_S (20: load after the node kill), BENCH_DRAIN_TIMEOUT_S
 * (60), BENCH_MAX_IN_FLIGHT (1000 requests), BENCH_KAFKA_PORT (19092; +1 SASL_SSL, +2 controller),
 * BENCH_KAFKA_HEAP (512m). Results: console and bench/results/recovery.md (overwritten).
 * Logs of every node and of the private broker stay in the run's temp dir (printed).
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { readFileSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { compatibilityPartitioner } from '@platformatic/kafka';
import Redis from 'ioredis';
import { stopChild } from './lib/children.mjs';
import { onCleanup, runWithCleanup } from './lib/cleanup.mjs';
import { startCpuMeter } from './lib/cpu.mjs';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
import { freePort } from './lib/ports.mjs';
import { say, now } from './lib/say.mjs';
import { bootstrapTenant, configureRoute, startStreamgate } from './lib/streamgate.mjs';
import { privateBroker } from './lib/private-broker.mjs';
import { startRecordingReceiver } from './lib/recording-receiver.mjs';
import { startPacedLoad } from './lib/paced-load.mjs';
import { groupLag } from './lib/group-lag.mjs';
import { analyseBrokerOutage, analyseNodeKill, logTimeline, readLog } from './lib/recovery-analysis.mjs';
import { renderRecoveryReport } from './lib/recovery-report.mjs';

const RESULTS = fileURLToPath(new URL('./results/recovery.md', import.meta.url));
const num = (name, def) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? def : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0 (got ${JSON.stringify(raw)})`);
  return value;
};
const options = {
  scenarios: (process.env.BENCH_SCENARIOS || 'broker,broker-long,node').split(',').map((s) => s.trim()).filter(Boolean),
  outageS: num('BENCH_OUTAGE_S', 10),
  longOutageS: num('BENCH_LONG_OUTAGE_S', 40),
  rate: num('BENCH_RATE', 300),
  keys: num('BENCH_KEYS', 48),
  bodyBytes: num('BENCH_BODY_BYTES', 512),
  warmupS: num('BENCH_WARMUP_S', 10),
  afterS: num('BENCH_AFTER_S', 10),
  nodeObserveS: num('BENCH_NODE_OBSERVE_S', 20),
  drainTimeoutS: num('BENCH_DRAIN_TIMEOUT_S', 60),
  maxInFlight: num('BENCH_MAX_IN_FLIGHT', 1000),
  kafkaPort: num('BENCH_KAFKA_PORT', 19092),
  kafkaHeap: process.env.BENCH_KAFKA_HEAP || '512m',
};
const SCENARIOS = ['broker', 'broker-long', 'node'];
/** streamgate creates its topic with kafka.partitions (config/default.yaml: 12). */
const PARTITIONS = 12;
const PROBE_MS = 50;
const LAG_SAMPLE_MS = 200;

async function main() {
  const unknown = options.scenarios.filter((s) => !SCENARIOS.includes(s));
  if (unknown.length) throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')} (known: ${SCENARIOS.join(', ')})`);
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-recovery-'));
  const loadBefore = loadavg();
  const startedAt = new Date();
  say(`run ${runId}; logs in ${workDir}`);

  const broker = privateBroker({ runDir: join(workDir, 'kafka'), port: options.kafkaPort, heap: options.kafkaHeap });
  // Registered before it starts: a failed or interrupted start still leaves nothing running.
  onCleanup(() => broker.destroy());
  say(`starting a private broker on ${broker.bootstrap} (run dir ${broker.runDir})`);
  const brokerStartMs = await broker.start();

  const db = await createBenchDatabase(`rec_${runId}`);
  onCleanup(() => dropBenchDatabase(db.name));
  const configFile = join(workDir, 'streamgate.yaml');
  const redisPrefix = `sgrecovery-${runId}:`;
  await writeFile(configFile, `redis:\n  keyPrefix: "${redisPrefix}"\n`);
  onCleanup(() => dropRedisKeys(redisPrefix));
  const baseEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
    KAFKA_BROKERS: broker.bootstrap,
    STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8',
    // info: the reader's "partitions assigned" and "Kafka answers again" lines are part of the figures.
    LOG_LEVEL: 'info',
    STREAMGATE_CONFIG: configFile,
  };
  const creds = await bootstrapTenant(baseEnv);
  const ctx = { runId, workDir, broker, baseEnv, creds };

  const results = [];
  for (const scenario of options.scenarios) {
    if (scenario === 'broker-long' && options.longOutageS === 0) continue;
    const outageS = scenario === 'broker' ? options.outageS : options.longOutageS;
    say(`--- scenario ${scenario}${scenario === 'node' ? '' : ` (outage ${outageS} s)`}`);
    const result = scenario === 'node' ? await nodeKill(ctx, scenario) : await brokerOutage(ctx, scenario, outageS);
    results.push(result);
    say(`${scenario}: ${result.headline}`);
  }

  const text = renderRecoveryReport({
    date: startedAt.toISOString(),
    command: commandLine(),
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? '?',
      loadBefore,
      loadAfter: loadavg(),
    },
    build: buildInfo(),
    options,
    brokerStartMs,
    workDir,
    results,
  });
  process.stdout.write(`\n${text}`);
  await writeFile(RESULTS, text);
  say(`written ${RESULTS}`);
}

/** The receiver, a queue routed to it, the load: what both kinds of scenario share. */
async function wire(ctx, { scenario, base, receiver }) {
  const queue = `rec-${scenario}`;
  const path = await configureRoute({ base, creds: ctx.creds, queue, target: `${queue}-receiver`, targetUrl: receiver.url });
  return () =>
    startPacedLoad({
      url: base,
      path,
      headers: { 'content-type': 'application/json', 'x-api-key': ctx.creds.ingressKey },
      rate: options.rate,
      keys: balancedKeys(options.keys, PARTITIONS),
      bodyBytes: options.bodyBytes,
      maxInFlight: options.maxInFlight,
    });
}

/**
 * `total` partition keys spread evenly over the partitions (as the writer
 * places them: murmur2), so every partition, and so each node's share,
 * carries load; plain k0..kN leave some partitions empty.
 */
function balancedKeys(total, partitions) {
  const perPartition = Math.max(1, Math.ceil(total / partitions));
  const counts = new Array(partitions).fill(0);
  const keys = [];
  for (let i = 0; keys.length < Math.max(total, partitions); i++) {
    const key = `k${i}`;
    const p = compatibilityPartitioner(undefined, Buffer.from(key)) % partitions;
    if (counts[p] < perPartition) {
      counts[p]++;
      keys.push(key);
    }
  }
  return keys;
}

function kafkaEnv(ctx, scenario) {
  const name = `sg-rec-${scenario}-${ctx.runId}`;
  return { env: { ...ctx.baseEnv, STREAMGATE_KAFKA_TOPIC: name, STREAMGATE_KAFKA_GROUP: name }, topic: name, group: name };
}

/**
 * Samples the group's lag per partition every LAG_SAMPLE_MS until stopped;
 * `last` is the newest sample (what was uncommitted just before a kill).
 */
function lagSampler(ctx, topic, group) {
  const lag = groupLag([ctx.broker.bootstrap]);
  const state = { last: null, running: true };
  const loop = (async () => {
    while (state.running) {
      const at = now();
      try {
        state.last = { at, lag: await lag.sample(topic, group) };
      } catch {
        // the broker is going away: keep the last good sample
      }
      await sleep(LAG_SAMPLE_MS);
    }
  })();
  return {
    get last() {
      return state.last;
    },
    async stop() {
      state.running = false;
      await loop;
    },
    lag,
  };
}

/** Waits until the receiver has every accepted event, then until nothing new arrives for 3 s. */
async function drain(receiver, accepted) {
  const until = Date.now() + options.drainTimeoutS * 1000;
  let count = await receiver.count();
  while (count.unique < accepted && Date.now() < until) {
    await sleep(250);
    count = await receiver.count();
  }
  let changedAt = Date.now();
  while (Date.now() - changedAt < 3_000 && Date.now() < until) {
    await sleep(250);
    const next = await receiver.count();
    if (next.requests !== count.requests) changedAt = Date.now();
    count = next;
  }
  return count;
}

// ---- scenario 1: the broker dies under load -----------------------------------

async function brokerOutage(ctx, scenario, outageS) {
  const { env, topic, group } = kafkaEnv(ctx, scenario);
  const receiver = await startRecordingReceiver(`receiver-${scenario}`);
  const logFile = join(ctx.workDir, `${scenario}-all-roles.log`);
  const node = await startStreamgate({ name: `${scenario}-all-roles`, env, port: await freePort(), logFile });
  const pid = node.child.pid;
  const load = (await wire(ctx, { scenario, base: node.base, receiver }))();
  const meter = startCpuMeter({ streamgate: pid, receiver: receiver.child.pid });
  const sampler = lagSampler(ctx, topic, group);
  await sleep(options.warmupS * 1000);

  await sampler.stop();
  const lagAtKill = sampler.last;
  const ingressInFlightAtKill = load.inFlight();
  const killAt = await ctx.broker.kill();
  say(`broker SIGKILLed; ${ingressInFlightAtKill} requests in flight at ingress; restarting it in ${outageS} s`);
  await sleep(Math.max(0, killAt + outageS * 1000 - now()));

  const restartAt = now();
  const restarted = ctx.broker.start();
  restarted.catch(() => {}); // awaited below; a failure is reported there
  let answeredAt = null;
  let leadersAt = null;
  const probeUntil = restartAt + 120_000;
  while (leadersAt === null && now() < probeUntil) {
    const { answers, leaders } = await ctx.broker.probe(topic);
    if (answers) answeredAt ??= now();
    if (leaders) leadersAt = now();
    else await sleep(PROBE_MS);
  }
  const upShMs = await restarted;
  if (answeredAt === null) throw new Error('the restarted broker never answered a Metadata request');
  say(`broker answers again ${((answeredAt - killAt) / 1000).toFixed(1)} s after the kill (up.sh took ${(upShMs / 1000).toFixed(1)} s)`);

  await sleep(Math.max(0, answeredAt + options.afterS * 1000 - now()));
  say('stopping the load; waiting for its answers and for delivery to drain');
  await load.stop();
  const cpu = meter();
  const accepted = load.records.filter((r) => r.status === 202).length;
  const counted = await drain(receiver, accepted);
  const stayedUp = node.child.exitCode === null && node.child.signalCode === null;
  const inTopic = await sampler.lag.count(topic).catch(() => null);
  await sampler.lag.close();
  const deliveries = await receiver.deliveries();
  const shutdown = await stopChild(node.child);
  await stopChild(receiver.child);

  const figures = analyseBrokerOutage({ records: load.records, deliveries, killAt, restartAt, answeredAt, leadersAt, lagAtKill, ingressInFlightAtKill });
  const logs = readLog(logFile);
  return {
    scenario,
    kind: 'broker',
    outageS,
    figures,
    skipped: load.skipped(),
    inTopic,
    counted,
    stayedUp,
    pid,
    shutdown,
    cpu,
    upShMs,
    problems: node.logs.problems(),
    timeline: logTimeline(logs, killAt),
    logFile,
    headline: `first delivery ${fmtS(figures.firstAnyAfterAnswerMs)} / first new event ${fmtS(figures.firstNewAfterAnswerMs)} after the broker answered; lost ${figures.lost.length}, duplicates ${figures.duplicates.extra} (in flight at kill: ${figures.inFlightAtKill} accepted-undelivered, ${figures.uncommittedAtKill ?? '?'} uncommitted)`,
  };
}

// ---- scenario 2: a delivery node dies under load ------------------------------

async function nodeKill(ctx, scenario) {
  const { env, topic, group } = kafkaEnv(ctx, scenario);
  const receiver = await startRecordingReceiver(`receiver-${scenario}`);
  const file = (who) => join(ctx.workDir, `${scenario}-${who}.log`);
  const ingress = await startStreamgate({ name: `${scenario}-ingress`, env, port: await freePort(), roles: ['ingress', 'management'], logFile: file('ingress') });
  const nodes = {};
  for (const who of ['delivery-a', 'delivery-b']) {
    nodes[who] = await startStreamgate({ name: `${scenario}-${who}`, env, port: await freePort(), roles: ['delivery'], logFile: file(who) });
  }
  const partitions = await settledAssignment({ a: file('delivery-a'), b: file('delivery-b') });
  say(`assignment: a ${partitions.a.join(',')} | b ${partitions.b.join(',')}`);
  const load = (await wire(ctx, { scenario, base: ingress.base, receiver }))();
  const meter = startCpuMeter({ ingress: ingress.child.pid, 'delivery-a': nodes['delivery-a'].child.pid, 'delivery-b': nodes['delivery-b'].child.pid, receiver: receiver.child.pid });
  const sampler = lagSampler(ctx, topic, group);
  await sleep(options.warmupS * 1000);

  await sampler.stop();
  const lagAtKill = sampler.last;
  // What b held right before the kill (a rebalance during the warm-up would show here).
  const held = lastAssignment(readLog(file('delivery-b')));
  const victim = nodes['delivery-b'];
  victim.child.kill('SIGKILL');
  const killAt = now();
  say(`delivery-b SIGKILLed (held partitions ${held.partitions.join(',')}); observing ${options.nodeObserveS} s`);
  await sleep(options.nodeObserveS * 1000);
  await load.stop();
  const cpu = meter();
  const accepted = load.records.filter((r) => r.status === 202).length;
  const counted = await drain(receiver, accepted);
  const partitionCount = (await sampler.lag.sample(topic, group)).size;
  await sampler.lag.close();
  const deliveries = await receiver.deliveries();
  const survivorUp = nodes['delivery-a'].child.exitCode === null && nodes['delivery-a'].child.signalCode === null;
  for (const child of [nodes['delivery-a'].child, ingress.child, receiver.child]) await stopChild(child);

  const partitionOf = (key) => compatibilityPartitioner(undefined, Buffer.from(key)) % partitionCount;
  const survivorLog = readLog(file('delivery-a'));
  const figures = analyseNodeKill({ records: load.records, deliveries, killAt, victimPartitions: held.partitions, partitionOf, partitionCount, lagAtKill, survivorLog });
  return {
    scenario,
    kind: 'node',
    figures,
    skipped: load.skipped(),
    counted,
    survivorUp,
    cpu,
    problems: { ingress: ingress.logs.problems(), 'delivery-a': nodes['delivery-a'].logs.problems() },
    timeline: logTimeline(survivorLog, killAt),
    logFiles: [file('ingress'), file('delivery-a'), file('delivery-b')],
    headline: `killed node's partitions delivering again after ${fmtS(figures.resumeMaxMs)} (max over its partitions); lost ${figures.lost.length}, duplicates ${figures.duplicates.extra} (uncommitted at kill on its partitions: ${figures.uncommittedVictim ?? '?'})`,
  };
}

/** The newest 'partitions assigned' line of a node's log. */
function lastAssignment(lines) {
  const assigned = lines.filter((l) => l.msg === 'partitions assigned');
  const last = assigned.at(-1);
  return last ? { partitions: last.partitions, generation: last.generation, time: last.time } : { partitions: [], generation: -1, time: null };
}

/** Waits until both nodes report the same generation and split the partitions between them. */
async function settledAssignment(files, timeoutMs = 40_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const a = lastAssignment(readLog(files.a));
    const b = lastAssignment(readLog(files.b));
    const overlap = a.partitions.filter((p) => b.partitions.includes(p));
    if (a.generation === b.generation && a.generation >= 0 && b.partitions.length > 0 && overlap.length === 0) {
      return { a: a.partitions, b: b.partitions };
    }
    if (Date.now() > until) throw new Error(`the two delivery nodes did not settle on an assignment: a ${JSON.stringify(a)}, b ${JSON.stringify(b)}`);
    await sleep(250);
  }
}

/** What the nodes left in the shared Redis under the run's private prefix (config version, liveness marks). */
async function dropRedisKeys(prefix) {
  const redis = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

const fmtS = (msValue) => (msValue === null || msValue === undefined ? '–' : `${(msValue / 1000).toFixed(2)} s`);

function commandLine() {
  const env = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`);
  return [...env, 'node', 'bench/recovery.mjs'].join(' ');
}

/** Which streamgate was measured: dist/'s build time and the commit it sits on. */
function buildInfo() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  let head = '?';
  let dirty = '';
  try {
    head = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    dirty = execFileSync('git', ['-C', root, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim() ? ' (src/ has uncommitted changes; dist/ may be built from them or not)' : '';
  } catch {
    // not a git checkout
  }
  let built = '?';
  try {
    built = statSync(fileURLToPath(new URL('../dist/cli.js', import.meta.url))).mtime.toISOString();
  } catch {
    // no dist/
  }
  const version = JSON.parse(readFileSync(fileURLToPath(new URL('../node_modules/@platformatic/kafka/package.json', import.meta.url)), 'utf8')).version;
  return { head, dirty, built, kafkaClient: `@platformatic/kafka ${version}` };
}

runWithCleanup(main);
