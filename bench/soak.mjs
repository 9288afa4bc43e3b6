/**
 * `node bench/soak.mjs` (dist/ built): does streamgate's storage stay bounded
 * under a steady load (issue 24)? A fixed paced rate for a long time, with a
 * short retention so the plateau shows within the run; every minute it prints
 * what Postgres, the log and the node keep:
 *
 *   paced load (open loop) ──► one node, every role ──► Kafka topic | embedded log ──► receiver
 *        every minute: Postgres database size and event_log + delivery_log bytes (every
 *        partition, indexes included), topic records (Kafka) or log folder bytes
 *        (embedded), the node's RSS, accepted and delivered so far
 *
 * With retention R hours, sizes should grow for R plus one partition width and
 * then stay flat (the sweep drops what the load adds). Meant for 20+ minutes on
 * a quiet machine: not a test.
 *
 * Options (env): BENCH_SOAK_MINUTES (25), BENCH_RATE (200 ev/s), BENCH_RETENTION_HOURS
 * (0.1 = 6 min), BENCH_BACKEND (kafka | embedded; kafka), BENCH_KEYS (100),
 * BENCH_BODY_BYTES (512), KAFKA_BROKERS (127.0.0.1:9092). The database, topic and
 * folders are removed at the end (Ctrl-C too).
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { onCleanup, runWithCleanup } from './lib/cleanup.mjs';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
import { freePort } from './lib/ports.mjs';
import { bootstrapTenant, clusterEnv, configureRoute, startStreamgate } from './lib/streamgate.mjs';
import { startReceiver } from './lib/receiver-client.mjs';
import { startPacedLoad } from './lib/paced-load.mjs';
import { kafkaAdmin } from './lib/kafka-admin.mjs';

const num = (name, def) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? def : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a number > 0 (got ${JSON.stringify(raw)})`);
  return value;
};
const MINUTES = num('BENCH_SOAK_MINUTES', 25);
const RATE = num('BENCH_RATE', 200);
const RETENTION_HOURS = num('BENCH_RETENTION_HOURS', 0.1);
const KEYS = num('BENCH_KEYS', 100);
const BODY = num('BENCH_BODY_BYTES', 512);
const BACKEND = process.env.BENCH_BACKEND === 'embedded' ? 'embedded' : 'kafka';
const say = (msg) => process.stderr.write(`[soak] ${msg}\n`);

function rssMb(pid) {
  try {
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024);
  } catch {
    return null;
  }
}

const mb = (bytes) => (bytes === null ? '-' : (Number(bytes) / 1_048_576).toFixed(1));

async function main() {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const workDir = await mkdtemp(join(tmpdir(), 'sg-soak-'));
  onCleanup(() => rm(workDir, { recursive: true, force: true }));
  const brokers = (process.env.KAFKA_BROKERS || '127.0.0.1:9092').split(',');
  const topic = `sg-soak-${runId}`;
  const group = `sg-soak-${runId}`;
  const db = await createBenchDatabase(`soak_${runId}`);
  onCleanup(() => dropBenchDatabase(db.name));
  const admin = BACKEND === 'kafka' ? kafkaAdmin(brokers) : null;
  if (admin) onCleanup(async () => void (await admin.cleanup(topic, [group])));
  const configFile = join(workDir, 'streamgate.yaml');
  await writeFile(configFile, `redis:\n  keyPrefix: "sgsoak-${runId}:"\n`);
  const dataDir = join(workDir, 'data');
  const env = clusterEnv({
    databaseUrl: db.url, brokers: BACKEND === 'kafka' ? brokers : [], topic, group, configFile,
    extra: {
      STREAMGATE_ALLOW_NETWORKS: '127.0.0.0/8',
      STREAMGATE_RETENTION_HOURS: String(RETENTION_HOURS),
      STREAMGATE_DATA_DIR: dataDir,
    },
  });
  const creds = await bootstrapTenant(env);
  const receiver = await startReceiver({ bodyBytes: BODY });
  const node = await startStreamgate({ name: 'streamgate', env, port: await freePort(), logFile: join(workDir, 'streamgate.log') });
  const path = await configureRoute({ base: node.base, creds, queue: 'soak', target: 'soak-receiver', targetUrl: receiver.url });
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  onCleanup(() => sql.end({ timeout: 5 }));

  say(`${BACKEND}, ${RATE} ev/s for ${MINUTES} min, retention ${RETENTION_HOURS} h, logs in ${workDir}`);
  const load = startPacedLoad({
    url: node.base, path, rate: RATE, bodyBytes: BODY, maxInFlight: 200,
    keys: Array.from({ length: KEYS }, (_, i) => `key-${i}`),
    headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json' },
  });
  const rows = [];
  const sample = async (minute) => {
    const [sizes] = await sql`
      SELECT pg_database_size(current_database())::bigint AS db,
             (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
              WHERE c.relkind = 'r' AND (c.relname LIKE 'event\\_log%' OR c.relname LIKE 'delivery\\_log%'))::bigint AS records,
             (SELECT count(*) FROM pg_inherits WHERE inhparent = 'event_log'::regclass)::int AS partitions`;
    const log = BACKEND === 'kafka'
      ? `${await admin.countEvents(topic)} records`
      : `${mb(Number(execFileSync('du', ['-sb', dataDir]).toString().split('\t')[0]))} MB`;
    const stats = await receiver.stats();
    const accepted = load.records.filter((r) => r.status === 202).length;
    const row = `| ${minute} | ${accepted} | ${stats.unique} | ${mb(sizes.db)} | ${mb(sizes.records)} | ${sizes.partitions} | ${log} | ${rssMb(node.child.pid)} MB |`;
    rows.push(row);
    process.stdout.write(`${row}\n`);
  };
  process.stdout.write('| minute | accepted | delivered | Postgres database MB | event_log + delivery_log MB | event_log partitions | log kept | RSS |\n|---|---|---|---|---|---|---|---|\n');
  for (let minute = 1; minute <= MINUTES; minute++) {
    await sleep(60_000);
    await sample(minute);
  }
  await load.stop();
  say(`done: ${load.records.length} sent, ${load.skipped()} skipped at the in-flight cap`);
}

runWithCleanup(main);
