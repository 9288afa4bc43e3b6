/**
 * `node bench/delivery-backlog.mjs` (after `npm run build`): delivery alone,
 * from a backlog already in Kafka, to bench/receiver.mjs.
 *
 *   1. a fresh database, topic and group; queue → target configured through the API
 *   2. N events appended straight to the topic (as ingress would: msgpack records, keyed)
 *   3. a `--roles delivery` node started; every 500 ms: its RSS, events delivered
 *
 * Two figures: delivered events/s while the backlog drains, and the process
 * memory while it drains against a slow receiver (its memory must stay
 * bounded: the backlog is Kafka's to keep, not the process's).
 *
 * One phase per receiver delay (--delays, default 0,50,200 ms: the receivers
 * users compare), each from a fresh database and topic; a table of the phases
 * closes the run: events/s, requests open at once at the receiver (flow
 * control's ceiling at work, docs/flow-control.md) and peak RSS.
 *
 * --signing (BENCH_SIGNING, "hmac") runs one phase per outbound signing mode
 * of the queue (and per delay): none, hmac (X-Service-Signature), standard
 * (Standard Webhooks, one HMAC key: a v1 entry), standard-ed25519 (one HMAC and
 * one ed25519 key: v1 and v1a entries); --rounds (1) repeats them, in a rotated
 * order each round, so modes compared share the same minutes of the box. The
 * summary gives each phase's streamgate CPU µs per delivered event (process
 * CPU seconds from the node's first second to the end of the drain, all
 * threads) and, per signing mode, the median over rounds.
 *
 * Options (argv or env): --events (BENCH_EVENTS, 200000), --keys (1000),
 * --delays (BENCH_RECEIVER_DELAYS, "0,50,200"; --delay or
 * BENCH_RECEIVER_DELAY_MS for one), --observe (seconds to watch each phase at
 * most, 120), --body (bytes, 1024); BENCH_PROFILE=1
 * runs the delivery node under --cpu-prof (see bench/lib/profile-summary.mjs).
 * Results: console and bench/results/results-backlog.md (appended per run).
 */
import { randomBytes } from 'node:crypto';
import { appendFile, mkdtemp, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { compatibilityPartitioner, ProduceAcks, Producer, stringSerializers } from '@platformatic/kafka';
import { stopAll, stopChild } from './lib/children.mjs';
import { freePort } from './lib/ports.mjs';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
import { kafkaAdmin } from './lib/kafka-admin.mjs';
import { bootstrapTenant, clusterEnv, configureRoute, startStreamgate } from './lib/streamgate.mjs';
import { startReceiver } from './lib/receiver-client.mjs';
import { cpuSeconds, findPid, startCpuMeter } from './lib/cpu.mjs';

const { encodeEvent } = await import(new URL('../dist/event-log/event-record.js', import.meta.url).href);
const say = (msg) => process.stderr.write(`[backlog] ${msg}\n`);
const RESULTS = fileURLToPath(new URL('./results/results-backlog.md', import.meta.url));

const { values } = parseArgs({ options: { events: { type: 'string' }, keys: { type: 'string' }, delay: { type: 'string' }, delays: { type: 'string' }, observe: { type: 'string' }, body: { type: 'string' }, signing: { type: 'string' }, rounds: { type: 'string' } } });
const opt = (name, env, def) => Number(values[name] ?? process.env[env] ?? def);
const EVENTS = opt('events', 'BENCH_EVENTS', 200_000);
const KEYS = opt('keys', 'BENCH_KEYS', 1000);
const ONE_DELAY = values.delay ?? process.env.BENCH_RECEIVER_DELAY_MS;
const DELAYS = (ONE_DELAY !== undefined ? String(ONE_DELAY) : values.delays ?? process.env.BENCH_RECEIVER_DELAYS ?? '0,50,200').split(',').map(Number);
const OBSERVE_S = opt('observe', 'BENCH_OBSERVE', 120);
const BODY = opt('body', 'BENCH_BODY_BYTES', 1024);
const PROFILE = process.env.BENCH_PROFILE === '1';
const SIGNINGS = (values.signing ?? process.env.BENCH_SIGNING ?? 'hmac').split(',');
const ROUNDS = opt('rounds', 'BENCH_ROUNDS', 1);
for (const mode of SIGNINGS) if (!['none', 'hmac', 'standard', 'standard-ed25519'].includes(mode)) throw new Error(`--signing: unknown mode ${mode}`);

const cleanups = [];
async function cleanup() {
  await stopAll().catch(() => {});
  for (const step of cleanups.reverse()) await step().catch((err) => say(`cleanup: ${err.message}`));
}
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => cleanup().finally(() => process.exit(130)));

function rssMb(pid) {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
    return Math.round(kb / 1024);
  } catch {
    return null;
  }
}

async function main() {
  const phases = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = SIGNINGS.map((_, i) => SIGNINGS[(i + round) % SIGNINGS.length]);
    for (const signing of order) {
      for (const delay of DELAYS) {
        phases.push({ round: round + 1, ...(await phase(delay, signing)) });
        // Each phase drops its database and topic: the next starts from empty ones. (Its
        // children are stopped already; stopAll() would refuse any new child after it.)
        for (const step of cleanups.splice(0).reverse()) await step().catch((err) => say(`cleanup: ${err.message}`));
      }
    }
  }
  const bySigning = SIGNINGS.map((mode) => {
    const us = phases.filter((p) => p.signing === mode && typeof p.usPerEvent === 'number').map((p) => p.usPerEvent);
    return `| ${mode} | ${us.map((x) => x.toFixed(1)).join(' / ')} | ${us.length ? median(us).toFixed(1) : '–'} |`;
  });
  const table = [
    `### Summary ${new Date().toISOString()}: ${EVENTS} events, ${KEYS} keys, body ${BODY} B, load average before the run ${LOAD_BEFORE}`,
    '',
    '| round | signing | receiver delay | delivered | events/s (first → last) | median of 0.5 s windows | most requests open at once (receiver) | peak RSS | streamgate CPU | CPU µs per delivered event |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...phases.map((p) => `| ${p.round} | ${p.signing} | ${p.delay} ms | ${p.delivered} of ${p.total}${p.delivered < p.total ? ' (observation ended)' : ''} | ${p.rate} | ${p.steady} | ${p.maxOpen} | ${p.peakRss} MB | ${p.cpu} % | ${typeof p.usPerEvent === 'number' ? p.usPerEvent.toFixed(1) : '–'} |`),
    '',
    ...(SIGNINGS.length > 1 || ROUNDS > 1 ? ['| signing | CPU µs per delivered event, per round | median |', '|---|---|---|', ...bySigning, ''] : []),
  ].join('\n');
  process.stdout.write(`\n${table}\n`);
  await appendFile(RESULTS, `${table}\n`);
}

const LOAD_BEFORE = loadavg().map((x) => x.toFixed(2)).join(' ');

async function phase(DELAY, SIGNING) {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-backlog-'));
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const topic = `sg-backlog-${runId}`;
  const group = `sg-backlog-${runId}`;
  const db = await createBenchDatabase(`bl_${runId}`);
  cleanups.push(() => dropBenchDatabase(db.name));
  const admin = kafkaAdmin(brokers);
  cleanups.push(async () => void (await admin.cleanup(topic, [group])));
  const configFile = join(workDir, 'streamgate.yaml');
  await writeFile(configFile, `redis:\n  keyPrefix: "sgbacklog-${runId}:"\n`);
  // A fresh key encryption key per phase: the ed25519 signing key's private half is stored encrypted.
  const env = clusterEnv({
    databaseUrl: db.url, brokers, topic, group, configFile,
    extra: { STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8', STREAMGATE_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') },
  });
  const creds = await bootstrapTenant(env);
  process.env.BENCH_RECEIVER_DELAY_MS = String(DELAY);
  const receiver = await startReceiver({ bodyBytes: BODY });

  say('configuring (management-only node; it also creates the topic)');
  const mgmt = await startStreamgate({ name: 'management', env, port: await freePort(), roles: ['management'], logFile: join(workDir, 'management.log') });
  await configureRoute({ base: mgmt.base, creds, queue: 'backlog', target: 'backlog-receiver', targetUrl: receiver.url });
  await configureSigning(mgmt.base, creds, SIGNING);
  await stopChild(mgmt.child);

  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  const [queue] = await sql`SELECT q.id::text AS "queueId", q.workspace_id::text AS "workspaceId" FROM queues q WHERE q.name = 'backlog'`;
  await sql.end();

  say(`appending ${EVENTS} events`);
  // Keys placed as Java's client (and streamgate's writer) place them: murmur2 & 0x7fffffff mod partitions.
  const producer = new Producer({
    clientId: 'sg-backlog', bootstrapBrokers: brokers, autocreateTopics: false, partitioner: compatibilityPartitioner,
    serializers: { key: stringSerializers.key },
  });
  const body = Buffer.from(`{"pad":"${'x'.repeat(Math.max(0, BODY - 10))}"}`);
  for (let i = 0; i < EVENTS; i += 5000) {
    const messages = [];
    for (let j = i; j < Math.min(EVENTS, i + 5000); j++) {
      const key = `k${j % KEYS}`;
      const record = {
        v: 1, id: `evt_bench${runId}${j}`, tenantPublicId: creds.tenantPublicId, workspaceId: queue.workspaceId, queueId: queue.queueId,
        queueName: 'backlog', receivedAt: Date.now(), contentType: 'application/json', idempotencyKey: null, eventType: null,
        groupKey: null, partitionKey: key, path: null, body,
      };
      messages.push({ topic, key, value: encodeEvent(record) });
    }
    await producer.send({ acks: ProduceAcks.ALL, messages });
  }
  await producer.close();
  const total = await admin.countEvents(topic);
  say(`${total} events in ${topic}; receiver delay ${DELAY} ms; signing ${SIGNING}`);

  const started = performance.now();
  // BENCH_PROFILE=1: --cpu-prof into the run's work dir (summarise with bench/lib/profile-summary.mjs);
  // BENCH_NODE_ARGS for any other node flag.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  if (PROFILE) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${workDir}`);
  const node = await startStreamgate({ name: 'delivery', env, port: await freePort(), roles: ['delivery'], logFile: join(workDir, 'delivery.log'), nodeArgs });
  await sleep(1_000); // let the node open its database connections
  const pgPids = Object.fromEntries(postgresBackends(db.name).map((pid, i) => [`pg${i}`, pid]));
  const meter = startCpuMeter({ streamgate: node.child.pid, receiver: receiver.child.pid, kafka: findPid('kafka.Kafka'), ...pgPids });
  const cpuBefore = cpuSeconds(node.child.pid);
  const deliveredBefore = (await receiver.stats()).unique;
  const samples = [];
  let stats = await receiver.stats();
  while (stats.unique < total && (performance.now() - started) / 1000 < OBSERVE_S) {
    await sleep(500);
    stats = await receiver.stats();
    samples.push({ t: (performance.now() - started) / 1000, rss: rssMb(node.child.pid), delivered: stats.unique });
    if (samples.length % 20 === 0) say(`${samples.at(-1).t.toFixed(0)} s: ${stats.unique}/${total} delivered, RSS ${samples.at(-1).rss} MB`);
  }
  const measured = meter();
  const cpuAfter = cpuSeconds(node.child.pid);
  const usPerEvent = cpuBefore !== null && cpuAfter !== null && stats.unique > deliveredBefore ? ((cpuAfter - cpuBefore) * 1e6) / (stats.unique - deliveredBefore) : null;
  // Postgres serves each connection from its own process: add them up.
  const cpu = Object.fromEntries(Object.entries(measured).filter(([k]) => !k.startsWith('pg')));
  cpu.postgres = Object.entries(measured).filter(([k]) => k.startsWith('pg')).reduce((n, [, v]) => n + (v ?? 0), 0);
  const first = samples.find((s) => s.delivered > 0);
  const last = samples.at(-1);
  const spanS = stats.lastAt && stats.firstAt ? (stats.lastAt - stats.firstAt) / 1000 : null;
  const rates = samples.slice(1).map((s, i) => (s.delivered - samples[i].delivered) / (s.t - samples[i].t));
  const steady = rates.slice(Math.floor(rates.length / 4));
  const rss = samples.map((s) => s.rss).filter((x) => x !== null);
  await stopChild(node.child, 30_000);
  const report = [
    `## ${new Date().toISOString()}: ${total} events backlog, receiver delay ${DELAY} ms, signing ${SIGNING}, ${KEYS} keys, body ${BODY} B`,
    '',
    `- node ${process.version}, ${cpus().length} CPUs; streamgate \`--roles delivery\`, defaults of config/default.yaml`,
    `- delivered ${stats.unique} of ${total} in ${last.t.toFixed(1)} s (${stats.duplicates} duplicates)${stats.unique < total ? ' — observation ended before the backlog drained' : ''}`,
    `- delivered events/s: ${spanS ? Math.round(stats.unique / spanS) : '–'} overall (first → last delivery), median of 0.5 s windows after the first quarter ${Math.round(median(steady))}`,
    `- first delivery ${first ? first.t.toFixed(1) : '–'} s after spawn`,
    `- most requests open at once at the receiver (one origin): ${stats.maxOpen}`,
    `- RSS of the delivery process: max ${Math.max(...rss)} MB, median ${median(rss)} MB, at the end ${rss.at(-1)} MB`,
    `- CPU, % of one core: ${Object.entries(cpu).map(([k, v]) => `${k} ${v ?? '?'} %`).join(', ')}`,
    `- streamgate CPU per delivered event: ${usPerEvent === null ? '–' : `${usPerEvent.toFixed(1)} µs`}`,
    ...(PROFILE ? [`- profiled with --cpu-prof (slower than unprofiled): \`node bench/lib/profile-summary.mjs ${workDir}\``] : []),
    `- RSS over time (s: MB): ${samples.filter((_, i) => i % Math.max(1, Math.floor(samples.length / 12)) === 0).map((s) => `${s.t.toFixed(0)}: ${s.rss}`).join(', ')}`,
    '',
  ].join('\n');
  process.stdout.write(`\n${report}\n`);
  await appendFile(RESULTS, `${report}\n`);
  await stopChild(receiver.child);
  return {
    delay: DELAY, signing: SIGNING, usPerEvent, delivered: stats.unique, total, rate: spanS ? Math.round(stats.unique / spanS) : '–', steady: Math.round(median(steady)),
    maxOpen: stats.maxOpen, peakRss: Math.max(...rss), cpu: cpu.streamgate ?? '?',
  };
}

/**
 * The queue's outbound signing and the workspace's signing keys for one phase
 * (bootstrapTenant's workspace starts with none): `hmac` and `standard` sign
 * with one HMAC key; `standard-ed25519` adds an ed25519 key (a v1a entry).
 */
async function configureSigning(base, creds, signing) {
  const headers = { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId, 'content-type': 'application/json' };
  const tenant = `${base}/v1/tenants/${encodeURIComponent(creds.tenantPublicId)}`;
  const call = async (method, path, body) => {
    const res = await fetch(`${tenant}${path}`, { method, headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  };
  await call('PUT', '/queues/backlog', { outboundSigning: signing === 'standard-ed25519' ? 'standard' : signing });
  if (signing !== 'none') await call('POST', '/signing-keys', {});
  if (signing === 'standard-ed25519') await call('POST', '/signing-keys', { algorithm: 'ed25519' });
}

/** Pids of the Postgres backend processes serving database `name`. */
function postgresBackends(name) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(name)) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

function median(xs) {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

main().then(
  () => cleanup().then(() => process.exit(0)),
  (err) => {
    say(`FAILED: ${err.stack ?? err}`);
    cleanup().finally(() => process.exit(1));
  },
);
