/**
 * `npm run bench`: ingress throughput of streamgate against a bare
 * uWebSockets.js baseline, then delivery throughput, in ONE run so that the
 * ratio compares two measurements taken minutes apart on the same (noisy)
 * machine rather than on different days.
 *
 *   a. baseline    autocannon ──► bare-server.mjs (202 at once)
 *   b. ingress     autocannon ──► streamgate ──► Kafka (fresh topic, fresh DB)
 *   c. delivery    streamgate ──► receiver.mjs, timed until every event arrived
 *   d. replay      fresh `--roles delivery` node, new group, no ingress load
 *
 * Options: see lib/options.mjs (argv or BENCH_* env). Results: console and
 * bench/results.md. Children are killed and the database dropped on every exit path.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { readOptions } from './lib/options.mjs';
import { forkChild, stopAll, stopChild, waitForMessage } from './lib/children.mjs';
import { freePort } from './lib/ports.mjs';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
import { kafkaAdmin } from './lib/kafka-admin.mjs';
import { bootstrapTenant, configureRoute, startStreamgate } from './lib/streamgate.mjs';
import { startReceiver } from './lib/receiver-client.mjs';
import { makeBody, makeRequests, runLoad } from './lib/load.mjs';
import { findPid, startCpuMeter } from './lib/cpu.mjs';
import { summarizeDelivery, observations } from './lib/findings.mjs';
import { renderReport, writeReport } from './lib/report.mjs';

const BARE_SERVER = fileURLToPath(new URL('./bare-server.mjs', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results.md', import.meta.url));
const QUEUE = 'bench';
const TARGET = 'bench-receiver';
const now = () => performance.timeOrigin + performance.now();
const say = (msg) => process.stderr.write(`[bench] ${msg}\n`);

// ---- cleanup: runs once, on success, error or Ctrl-C --------------------------
const cleanups = [];
let cleaning = null;
function cleanup() {
  cleaning ??= (async () => {
    await stopAll().catch(() => {});
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (err) {
        say(`cleanup: ${err.message}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    say(`${signal}: cleaning up`);
    cleanup().finally(() => process.exit(130));
  });
}
// Anything thrown outside main()'s promise chain must not skip the cleanup either.
for (const event of ['uncaughtException', 'unhandledRejection']) {
  process.on(event, (err) => {
    say(`${event}: ${err?.stack ?? err}`);
    cleanup().finally(() => process.exit(1));
  });
}

async function main() {
  const options = readOptions();
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-bench-'));
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const topic = `sg-bench-${runId}`;
  const group = `sg-bench-${runId}`;
  const replayGroup = `${group}-replay`;
  say(`run ${runId}; logs in ${workDir}`);

  // ---- isolated backends: own database, topic, groups, Redis key prefix --------
  const db = await createBenchDatabase(runId);
  cleanups.push(() => dropBenchDatabase(db.name));
  const kafka = kafkaAdmin(brokers);
  cleanups.push(async () => {
    for (const problem of await kafka.cleanup(topic, [group, replayGroup])) say(`cleanup: ${problem}`);
  });
  // Other runs/tests on this box publish cache invalidations on the default
  // prefix; a private one keeps their config writes from flushing our caches.
  const configFile = join(workDir, 'streamgate.yaml');
  await writeFile(configFile, `redis:\n  keyPrefix: "sgbench-${runId}:"\n`);
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    KAFKA_BROKERS: brokers.join(','),
    STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8',
    LOG_LEVEL: 'warn',
    STREAMGATE_KAFKA_TOPIC: topic,
    STREAMGATE_KAFKA_GROUP: group,
    STREAMGATE_CONFIG: configFile,
  };
  const creds = await bootstrapTenant(env);

  // Identical request bytes for both phases (same path, key header, partition
  // keys and body), so the only difference is the server behind the port.
  const path = `/events/${encodeURIComponent(creds.tenantPublicId)}/${QUEUE}`;
  const body = makeBody(options.bodyBytes);
  const requests = makeRequests({
    path,
    headers: { 'content-type': 'application/json', 'x-api-key': creds.ingressKey },
    body,
    keys: options.keys,
  });
  const load = (port, duration) =>
    runLoad({ url: `http://127.0.0.1:${port}`, requests, duration, connections: options.connections, pipelining: options.pipelining });
  const kafkaPid = findPid('kafka.Kafka');

  // ---- a. baseline -----------------------------------------------------------
  say('a. baseline: bare uWebSockets.js');
  const bare = forkChild('bare-server', BARE_SERVER);
  const { port: barePort } = await waitForMessage(bare, 'ready');
  if (options.warmup) await load(barePort, options.warmup);
  let meter = startCpuMeter({ server: bare.pid, autocannon: process.pid });
  const baseline = await load(barePort, options.duration);
  baseline.cpu = meter();
  await stopChild(bare);
  say(`   ${Math.round(baseline.acceptedPerS)} ev/s, p99 ${baseline.p99} ms`);

  // ---- b. streamgate ingress ---------------------------------------------------
  say('b. streamgate: start, configure, load');
  const receiver = await startReceiver({ bodyBytes: options.bodyBytes });
  const sg = await startStreamgate({ name: 'streamgate', env, port: await freePort(), logFile: join(workDir, 'streamgate.log') });
  const sgPort = new URL(sg.base).port;
  await configureRoute({ base: sg.base, creds, queue: QUEUE, target: TARGET, targetUrl: receiver.url });

  const notes = [];
  if (options.warmup) {
    // Warm-up events are delivered and forgotten before the measured phase, so
    // the delivery figures below cover exactly the measured events.
    await load(sgPort, options.warmup);
    const warm = await settledCount(kafka, topic);
    const drained = await receiver.waitForUnique(warm, options.drainTimeout * 1000);
    if (!drained.complete) notes.push(`warm-up: only ${drained.unique}/${warm} events delivered before the timeout; delivery figures are skewed`);
  }
  await receiver.reset();
  const before = await settledCount(kafka, topic);
  meter = startCpuMeter({ streamgate: sg.child.pid, autocannon: process.pid, receiver: receiver.child.pid, kafka: kafkaPid });
  const loadStart = now();
  const streamgate = await load(sgPort, options.duration);
  const loadEnd = now();
  streamgate.cpu = meter();
  say(`   ${Math.round(streamgate.acceptedPerS)} ev/s, p99 ${streamgate.p99} ms, non-2xx ${streamgate.non2xx}, errors ${streamgate.errors}`);

  // ---- c. delivery while and after ingress -----------------------------------------
  const expected = (await settledCount(kafka, topic)) - before;
  say(`c. waiting for ${expected} events at the receiver`);
  meter = startCpuMeter({ streamgate: sg.child.pid, receiver: receiver.child.pid, kafka: kafkaPid });
  const seen = await receiver.waitForUnique(expected, options.drainTimeout * 1000, { onProgress: (s) => say(`   ${s.unique}/${expected}`) });
  const drainCpu = meter();
  const delivery = summarizeDelivery(seen, expected, { startRef: loadStart, tailRef: loadEnd });
  delivery.cpu = drainCpu;
  say(`   ${Math.round(delivery.perS)} ev/s delivered`);
  const shutdown = await stopChild(sg.child, 30_000);

  // ---- d. delivery only: replay the topic with a fresh group -------------------
  say('d. delivery-only replay');
  await receiver.reset();
  const total = await kafka.countEvents(topic);
  const spawnedAt = now();
  const replay = await startStreamgate({
    name: 'streamgate-delivery',
    env: { ...env, STREAMGATE_KAFKA_GROUP: replayGroup },
    port: await freePort(),
    roles: ['delivery'],
    logFile: join(workDir, 'streamgate-delivery.log'),
  });
  meter = startCpuMeter({ streamgate: replay.child.pid, receiver: receiver.child.pid, kafka: kafkaPid });
  const replayed = await receiver.waitForUnique(total, options.drainTimeout * 1000, { onProgress: (s) => say(`   ${s.unique}/${total}`) });
  const deliveryOnly = summarizeDelivery(replayed, total, { startRef: spawnedAt, tailRef: null });
  deliveryOnly.cpu = meter();
  say(`   ${Math.round(deliveryOnly.perS)} ev/s delivered`);
  const replayShutdown = await stopChild(replay.child, 30_000);
  await stopChild(receiver.child);

  // ---- d. report -----------------------------------------------------------
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    options,
    baseline,
    streamgate,
    ratio: baseline.acceptedPerS > 0 ? streamgate.acceptedPerS / baseline.acceptedPerS : 0,
    delivery,
    deliveryOnly,
    notes: [
      ...notes,
      ...observations({ options, baseline, streamgate, expected, delivery, deliveryOnly, shutdown, replayShutdown, logs: [sg.logs, replay.logs], readyMs: [sg.readyMs, replay.readyMs] }),
    ],
  };
  const text = renderReport(results);
  process.stdout.write(`\n${text}`);
  await writeReport(RESULTS, text);
  say(`written ${RESULTS}`);
}

/**
 * Records in the topic once produce calls still in flight have landed: the
 * count must hold still for a few reads in a row (streamgate acks only after
 * Kafka does, but the bench stops reading responses at the deadline).
 */
async function settledCount(kafka, topic) {
  let last = await kafka.countEvents(topic);
  for (let stable = 0; stable < 3; ) {
    await sleep(150);
    const n = await kafka.countEvents(topic);
    stable = n === last ? stable + 1 : 0;
    last = n;
  }
  return last;
}

main().then(
  () => cleanup().then(() => process.exit(0)),
  (err) => {
    say(`FAILED: ${err.stack ?? err}`);
    cleanup().finally(() => process.exit(1));
  },
);
