/**
 * `node bench/soak.mjs` (dist/ built): does streamgate's storage stay bounded
 * under a steady load (issue 24)? A fixed paced rate for a long time, with a
 * short retention so the plateau shows within the run; every minute it prints
 * what Postgres, the log and the node keep:
 *
 *   paced load (open loop) ──► one node, every role ──► Kafka topic | embedded log ──► receiver
 *        every minute: Postgres database size and event_log bytes (every
 *        partition, indexes included), topic records (Kafka) or log folder bytes
 *        (embedded), the node's RSS, accepted and delivered so far
 *
 * With retention R hours, sizes should grow for R plus one partition width and
 * then stay flat (the sweep drops what the load adds). Sizes are read every 5 s
 * and each minute shows their range (the sweep and the broker delete in steps,
 * so what is kept is a sawtooth); slopes are over each minute's greatest. On a
 * server with autovacuum off the soak vacuums the catalogs once a minute in its
 * place (BENCH_SOAK_VACUUM=0: not). Meant for 20+ minutes on a quiet machine:
 * not a test.
 *
 * Options (env): BENCH_SOAK_MINUTES (25), BENCH_RATE (200 ev/s), BENCH_RETENTION_HOURS
 * (0.1 = 6 min), BENCH_BACKEND (kafka | embedded; kafka), BENCH_KEYS (100),
 * BENCH_BODY_BYTES (512), KAFKA_BROKERS (127.0.0.1:9092). The database, topic and
 * folders are removed at the end (Ctrl-C too).
 *
 * The node's memory, besides RSS: V8's heap (used / total) and external memory
 * (Buffers) from its /metrics, to tell a JS heap that keeps growing from V8 or
 * a native library taking more. BENCH_HEAP_SNAPSHOTS=5,25 writes a V8 heap
 * snapshot of the node at those minutes (SIGUSR2, --heapsnapshot-signal) into
 * the run's folder, kept: `node bench/lib/heap-diff.mjs A B` says what grew.
 *
 * Also per minute: accept→deliver latency p50/p99 of the events first delivered
 * in that minute (the receiver's arrival of each body's seq against the load's
 * send time), and the node's last retention sweep (duration, from /metrics).
 * At the end: the slope of the last 10 minutes (MB or records per minute) of
 * each size, by least squares, and the table in bench/results/soak.md.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
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
const SNAPSHOT_MINUTES = new Set((process.env.BENCH_HEAP_SNAPSHOTS ?? '').split(',').filter(Boolean).map(Number));
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
  // With heap snapshots the folder stays: they are what the run was for.
  if (!SNAPSHOT_MINUTES.size) onCleanup(() => rm(workDir, { recursive: true, force: true }));
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
  const nodeArgs = SNAPSHOT_MINUTES.size ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${workDir}`] : [];
  const node = await startStreamgate({ name: 'streamgate', env, port: await freePort(), logFile: join(workDir, 'streamgate.log'), nodeArgs });
  const path = await configureRoute({ base: node.base, creds, queue: 'soak', target: 'soak-receiver', targetUrl: receiver.url });
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  onCleanup(() => sql.end({ timeout: 5 }));

  say(`${BACKEND}, ${RATE} ev/s for ${MINUTES} min, retention ${RETENTION_HOURS} h, logs in ${workDir}`);
  const loadBefore = loadavg().map((x) => x.toFixed(2)).join(' ');
  const startedAt = new Date().toISOString();
  await receiver.track(true);
  let seen = 0;
  const load = startPacedLoad({
    url: node.base, path, rate: RATE, bodyBytes: BODY, maxInFlight: 200,
    keys: Array.from({ length: KEYS }, (_, i) => `key-${i}`),
    headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json' },
  });
  const rows = [];
  const series = [];
  // Sizes are read every 5 s and each minute reports their least and greatest
  // readings: the sweep drops partitions once a minute and the broker deletes
  // segments once per log.retention.check.interval.ms, so what is kept is a
  // sawtooth, and one reading a minute lands on either edge of it. Slopes are
  // taken over each minute's greatest reading (the envelope).
  const readSizes = async () => {
    const [row] = await sql`
      SELECT pg_database_size(current_database())::bigint AS db,
             (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
              WHERE c.relkind = 'r' AND (c.relname LIKE 'event\\_log%' OR c.relname LIKE 'delivery\\_log%'))::bigint AS records,
             (SELECT count(*) FROM pg_inherits WHERE inhparent = 'event_log'::regclass)::int AS partitions,
             (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind = 'r' AND n.nspname = 'pg_catalog')::bigint AS catalogs`;
    const log = BACKEND === 'kafka' ? Number(await admin.countEvents(topic)) : Number(execFileSync('du', ['-sb', dataDir]).toString().split('\t')[0]);
    return { db: Number(row.db), records: Number(row.records), partitions: row.partitions, catalogs: Number(row.catalogs), log };
  };
  const watch = watchMinMax(readSizes, 5_000);
  // This CI machine's Postgres runs with autovacuum = off, and then nothing
  // reclaims the catalog rows of the partitions made and dropped every few
  // seconds at a minutes-long retention: the soak stands in for autovacuum on
  // the catalogs (once a minute) unless BENCH_SOAK_VACUUM=0. The node warns
  // about the setting at start (src/jobs/retention-sweep.ts).
  const [{ autovacuum }] = await sql`SELECT current_setting('autovacuum') AS autovacuum`;
  const vacuumCatalogs = autovacuum === 'off' && process.env.BENCH_SOAK_VACUUM !== '0';
  const vacuumNote = autovacuum === 'on'
    ? 'autovacuum on'
    : vacuumCatalogs ? 'autovacuum off on this server: the soak VACUUMs the catalogs once a minute in its place' : 'autovacuum off on this server, and nothing vacuums (BENCH_SOAK_VACUUM=0)';
  say(vacuumNote);
  const vacuumTimer = vacuumCatalogs
    ? setInterval(() => {
      sql.unsafe(`VACUUM ${CATALOGS.map((c) => `pg_catalog.${c}`).join(', ')}`).catch((err) => say(`vacuum: ${err.message}`));
    }, 60_000)
    : null;
  onCleanup(() => vacuumTimer && clearInterval(vacuumTimer));
  onCleanup(() => watch.stop());
  const sample = async (minute) => {
    const { min, max } = await watch.take();
    const range = (key, fmt) => `${fmt(min[key])}–${fmt(max[key])}`;
    const log = BACKEND === 'kafka' ? `${range('log', String)} records` : `${range('log', mb)} MB`;
    const stats = await receiver.stats();
    const accepted = load.records.filter((r) => r.status === 202).length;
    // Accept→deliver of this minute's first deliveries: arrival minus the load's send time.
    const fresh = await receiver.arrivals(seen);
    seen += fresh.seqs.length;
    const latencies = fresh.seqs.map((seq, i) => fresh.ats[i] - load.records[seq].sentAt).sort((a, b) => a - b);
    const pct = (q) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(0) : '-');
    const metrics = await nodeMetrics(node.base);
    const sweep = lastSweep(metrics);
    const rss = rssMb(node.child.pid);
    const heapUsed = metrics('streamgate_nodejs_heap_size_used_bytes') / 1_048_576;
    const heapTotal = metrics('streamgate_nodejs_heap_size_total_bytes') / 1_048_576;
    const external = metrics('streamgate_nodejs_external_memory_bytes') / 1_048_576;
    series.push({ minute, catalogs: max.catalogs / 1_048_576, db: max.db / 1_048_576, records: max.records / 1_048_576, log: BACKEND === 'kafka' ? max.log : max.log / 1_048_576, rss, heapUsed, heapTotal, external });
    const row = `| ${minute} | ${accepted} | ${stats.unique} | ${range('db', mb)} | ${range('catalogs', mb)} | ${range('records', mb)} | ${range('partitions', String)} | ${log} | ${rss} MB | ${heapUsed.toFixed(1)} / ${heapTotal.toFixed(1)} MB | ${external.toFixed(1)} MB | ${pct(0.5)} | ${pct(0.99)} | ${sweep} |`;
    if (SNAPSHOT_MINUTES.has(minute)) {
      node.child.kill('SIGUSR2');
      say(`minute ${minute}: heap snapshot requested, into ${workDir}`);
    }
    rows.push(row);
    process.stdout.write(`${row}\n`);
  };
  const header = '| minute | accepted | delivered | Postgres database MB | of which system catalogs MB | event_log MB (delivery state inside) | event_log partitions | log kept | RSS | V8 heap used / total | external | accept→deliver p50 ms | p99 ms | last sweep |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n';
  process.stdout.write(header);
  // Which tables hold the growth of the last 10 minutes (what a slope alone cannot say).
  const tableSizes = async () => new Map((await sql`
    SELECT n.nspname || '.' || c.relname AS name, pg_total_relation_size(c.oid)::bigint AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind = 'r' AND n.nspname IN ('public', 'pg_catalog')`).map((r) => [r.name, Number(r.bytes)]));
  let sizesBefore = null;
  // Samples on a fixed schedule (start + n minutes), not a minute after the
  // last sample ended: a period of 60 s plus the sampling time read the log's
  // 60-s sawtooth a quarter second later each minute, which showed as a creep
  // of ~250 records a minute at 1,000 ev/s (the runs before this change).
  const t0 = Date.now();
  for (let minute = 1; minute <= MINUTES; minute++) {
    await sleep(Math.max(0, t0 + minute * 60_000 - Date.now()));
    await sample(minute);
    if (minute === Math.max(1, MINUTES - 10)) sizesBefore = { minute, sizes: await tableSizes() };
  }
  watch.stop();
  if (vacuumTimer) clearInterval(vacuumTimer);
  const sizesAfter = await tableSizes();
  // Whether autovacuum keeps up with the catalog rows that partitions made and dropped leave dead.
  const vacuums = await sql`
    SELECT relname, n_live_tup::int AS live, n_dead_tup::int AS dead, autovacuum_count::int AS vacuums
    FROM pg_stat_sys_tables WHERE schemaname = 'pg_catalog' AND relname IN ('pg_attribute', 'pg_class', 'pg_depend', 'pg_type')
    ORDER BY relname`;
  const vacuumLine = `catalog autovacuum at the end: ${vacuums.map((v) => `${v.relname} ${v.vacuums} runs, ${v.live} live / ${v.dead} dead rows`).join('; ')}`;
  process.stdout.write(`${vacuumLine}\n`);
  const grown = [...sizesAfter].map(([name, bytes]) => ({ name, delta: bytes - (sizesBefore?.sizes.get(name) ?? 0), bytes }))
    .filter((t) => sizesBefore?.sizes.has(t.name) && t.delta !== 0)
    .sort((a, b) => b.delta - a.delta).slice(0, 12);
  const growthLine = `tables that grew from minute ${sizesBefore?.minute} to ${MINUTES} (ours and the system catalogs, existing at both; event_log partitions are made ahead and dropped whole): ${grown.map((t) => `${t.name} ${t.delta >= 0 ? '+' : ''}${(t.delta / 1024).toFixed(0)} KiB (${mb(t.bytes)} MB)`).join(', ') || 'none'}`;
  process.stdout.write(`\n${growthLine}\n`);
  await load.stop();
  say(`done: ${load.records.length} sent, ${load.skipped()} skipped at the in-flight cap`);
  const last = series.slice(-10);
  const slopes = [
    `Postgres database ${slope(last, 'db').toFixed(2)} MB/min`,
    `system catalogs ${slope(last, 'catalogs').toFixed(2)} MB/min`,
    `event_log ${slope(last, 'records').toFixed(2)} MB/min`,
    BACKEND === 'kafka' ? `topic ${slope(last, 'log').toFixed(0)} records/min` : `log folder ${slope(last, 'log').toFixed(2)} MB/min`,
    `RSS ${slope(last, 'rss').toFixed(2)} MB/min`,
    `V8 heap used ${slope(last, 'heapUsed').toFixed(2)} MB/min`,
    `heap total ${slope(last, 'heapTotal').toFixed(2)} MB/min`,
    `external ${slope(last, 'external').toFixed(2)} MB/min`,
  ].join(', ');
  process.stdout.write(`\nslope of the last ${last.length} minutes (least squares over each minute's greatest size): ${slopes}\n`);
  const report = [
    `## ${startedAt}: ${BACKEND}, ${RATE} ev/s for ${MINUTES} min, retention ${RETENTION_HOURS} h (${(RETENTION_HOURS * 60).toFixed(1)} min), ${KEYS} keys, ${BODY} B bodies`,
    '',
    `- ${vacuumNote}`,
    `- load average at the start ${loadBefore}, at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${load.records.length} sent, ${load.skipped()} skipped at the in-flight cap`,
    `- slope of the last ${last.length} minutes (least squares over each minute's greatest size, sampled every 5 s): ${slopes}`,
    `- ${growthLine}`,
    `- ${vacuumLine}`,
    '',
    header + rows.join('\n'),
    '',
  ].join('\n');
  await appendFile(RESULTS, `${report}\n`);
}

/** The catalogs that partitions made and dropped leave dead rows in. */
const CATALOGS = ['pg_attribute', 'pg_class', 'pg_depend', 'pg_type', 'pg_index', 'pg_inherits', 'pg_constraint', 'pg_attrdef'];

const RESULTS = fileURLToPath(new URL('./results/soak.md', import.meta.url));

/**
 * Reads `read()` (an object of numbers) every `everyMs`; take() answers, key
 * by key, the least and greatest readings since the last take() (a fresh
 * reading when none came meanwhile).
 */
function watchMinMax(read, everyMs) {
  let min = null;
  let max = null;
  let stopped = false;
  const add = (r) => {
    min = min ? Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.min(min[k], v)])) : { ...r };
    max = max ? Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.max(max[k], v)])) : { ...r };
  };
  const tick = async () => {
    while (!stopped) {
      try {
        add(await read());
      } catch (err) {
        say(`sizes: ${err.message}`);
      }
      await sleep(everyMs);
    }
  };
  void tick();
  return {
    async take() {
      if (!min) add(await read());
      const out = { min, max };
      min = null;
      max = null;
      return out;
    },
    stop() {
      stopped = true;
    },
  };
}

/** Least-squares slope of `key` per minute over `points`. */
function slope(points, key) {
  const xs = points.map((p) => p.minute);
  const ys = points.map((p) => p[key] ?? 0);
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  const num = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0);
  const den = xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

/** The node's /metrics, as a lookup of one series' value by name (NaN when absent or unreadable). */
async function nodeMetrics(base) {
  let text = '';
  try {
    text = await (await fetch(`${base}/metrics`)).text();
  } catch {
    // NaN below
  }
  return (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

/** The node's last retention sweep, from its /metrics: "123 ms, 20 s ago", or "-" before the first. */
function lastSweep(value) {
  const seconds = value('streamgate_retention_sweep_duration_seconds');
  const at = value('streamgate_retention_last_sweep_timestamp_seconds');
  // Both gauges read 0 until this node's first sweep (the first runs one interval after start).
  if (!Number.isFinite(seconds) || !(at > 0)) return '-';
  return `${(seconds * 1000).toFixed(0)} ms, ${Math.round(Date.now() / 1000 - at)} s ago`;
}

runWithCleanup(main);
