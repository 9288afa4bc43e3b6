/**
 * `node bench/kafka-writer.mjs` (after `npm run build`): streamgate's Kafka
 * writer alone (KafkaWriter in dist/event-log/kafka/kafka-writer.js, on
 * @platformatic/kafka), in rounds, each round a fresh child process and a
 * fresh topic:
 *
 *   orchestrator ── creates topic ──► broker
 *        │ fork                          ▲
 *        ▼                               │ produce, acks=all
 *   child: N appenders ──► KafkaWriter ──┘   (warm-up, then the measured window)
 *        │ 'measuring' / 'measured' over IPC: the orchestrator reads the
 *        │ broker's and the machine's CPU from /proc over the same window
 *        ▼
 *   orchestrator: ListOffsets == acked? ── deletes topic
 *
 * Per round: events/s, the writer process's CPU per event (process.cpuUsage:
 * its own threads, the load loop included), the broker's CPU per event, p50/p99
 * of append(), every other process's CPU (noise), and whether the topic holds
 * exactly the records that were acked; then the median over rounds. The
 * producer settings are config/default.yaml's (through dist/), plus
 * BENCH_PRODUCER.
 *
 * The A/B against the home-made writer this one replaced is written up in
 * docs/kafka-client.md (2026-11-24). To repeat an A/B against an older
 * commit, build it elsewhere and point this bench at its dist/, alternating
 * the two builds (ABBA) on the same broker:
 *
 *   mkdir /tmp/sg-old && git archive <commit> | tar -x -C /tmp/sg-old
 *   (cd /tmp/sg-old && npm ci && npm run build)
 *   node bench/kafka-writer.mjs                              # A: this tree
 *   BENCH_DIST=/tmp/sg-old/dist node bench/kafka-writer.mjs  # B: the older build
 *
 * (copy bench/results/kafka-writer.md aside between runs: each run rewrites it). The
 * older build needs a KafkaWriter with the same shape (new KafkaWriter(kafka
 * settings, logger), connect, append, close) and loadConfig in
 * dist/config/load-config.js.
 *
 * Options (env): BENCH_ROUNDS (3), BENCH_DURATION (5 s measured per round),
 * BENCH_WARMUP (1 s), BENCH_CONCURRENCY (50 appenders awaiting their append in
 * a loop), BENCH_KEYS (1000 partition keys), BENCH_BODY_BYTES (1024),
 * BENCH_PARTITIONS (12), BENCH_PRODUCER (JSON merged into the producer
 * settings, e.g. '{"lingerMs":2}'), BENCH_DIST (the dist/ folder to load the
 * writer from; this tree's by default), KAFKA_BROKERS (127.0.0.1:9092).
 * Results: console and bench/results/kafka-writer.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { forkChild, stopChild, waitForMessage } from './lib/children.mjs';
import { onCleanup, runWithCleanup } from './lib/cleanup.mjs';
import { findPid, startCpuMeter } from './lib/cpu.mjs';
import { kafkaAdmin } from './lib/kafka-admin.mjs';
import { say } from './lib/say.mjs';
import { int, ms, table } from './lib/table.mjs';

const SELF = fileURLToPath(import.meta.url);
const RESULTS = fileURLToPath(new URL('./results/kafka-writer.md', import.meta.url));

const num = (name, def) => Number(process.env[name] ?? def);
const options = {
  rounds: num('BENCH_ROUNDS', 3),
  duration: num('BENCH_DURATION', 5),
  warmup: num('BENCH_WARMUP', 1),
  concurrency: num('BENCH_CONCURRENCY', 50),
  keys: num('BENCH_KEYS', 1000),
  bodyBytes: num('BENCH_BODY_BYTES', 1024),
  partitions: num('BENCH_PARTITIONS', 12),
  producer: JSON.parse(process.env.BENCH_PRODUCER || '{}'),
  dist: resolvePath(process.env.BENCH_DIST ?? fileURLToPath(new URL('../dist', import.meta.url))),
  brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
};

if (process.argv[2] === 'child') await child(JSON.parse(process.argv[3]));
else runWithCleanup(main);

// ---- orchestrator ------------------------------------------------------------

async function main() {
  const writerFile = join(options.dist, 'log', 'kafka-writer.js');
  if (!existsSync(writerFile)) throw new Error(`${writerFile} is missing: run \`npm run build\` first`);
  // Named in the report: an older build (BENCH_DIST) may hold the home-made writer.
  const client = importsPackage(writerFile, '@platformatic/kafka') ? `@platformatic/kafka ${packageVersion(writerFile, '@platformatic/kafka')}` : 'not @platformatic/kafka (an older build?)';
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const kafkaPid = findPid('kafka.Kafka');
  const admin = kafkaAdmin(options.brokers);
  const topics = new Set();
  onCleanup(async () => {
    for (const topic of topics) await admin.deleteTopic(topic).catch((err) => say(`cleanup: delete ${topic}: ${err.message}`));
    await admin.close().catch(() => {});
  });
  say(`run ${runId}: ${writerFile} (${client}), ${options.rounds} round(s) of ${options.duration} s (+${options.warmup} s warm-up), ${options.concurrency} appenders; broker pid ${kafkaPid ?? 'not found'}`);

  const rows = [];
  for (let round = 1; round <= options.rounds; round++) {
    const topic = `sg-bench-kw-${runId}-r${round}`;
    topics.add(topic);
    await admin.createTopic(topic, options.partitions);
    const result = await runWriter({ topic, kafkaPid, name: `round ${round}` });
    result.inTopic = await admin.countEvents(topic);
    result.ok = result.failed === 0 && result.inTopic === result.acked;
    await admin.deleteTopic(topic);
    topics.delete(topic);
    rows.push({ round, ...result });
    say(
      `round ${round}: ${int(result.perS)} ev/s, ${result.writerUs.toFixed(1)} µs CPU/event (broker ${fixed(result.brokerUs)}), ` +
        `p50 ${ms(result.p50)} p99 ${ms(result.p99)} ms, others ${result.cpu.others ?? '–'} %; acked ${result.acked}, failed ${result.failed}, in topic ${result.inTopic}${result.ok ? '' : '  <-- MISMATCH'}${result.firstError ? ` (first error: ${result.firstError})` : ''}`,
    );
  }

  const text = report({ writerFile, client, rows });
  process.stdout.write(`\n${text}`);
  await writeFile(RESULTS, text);
  say(`written ${RESULTS}`);
  if (rows.some((r) => !r.ok)) throw new Error('a topic does not hold exactly the acked records: see the report');
}

/** One round: a fresh child process, measured over the window it announces. */
async function runWriter({ topic, kafkaPid, name }) {
  const spec = { topic, brokers: options.brokers, ...pick(options, ['duration', 'warmup', 'concurrency', 'keys', 'bodyBytes', 'partitions', 'producer', 'dist']) };
  const proc = forkChild(`kafka-writer ${name}`, SELF, ['child', JSON.stringify(spec)]);
  const { settings } = await waitForMessage(proc, 'ready', 60_000);
  const measuring = waitForMessage(proc, 'measuring', 60_000 + options.warmup * 1000);
  proc.send({ type: 'go' });
  await measuring;
  // Broker and machine over the measured window only (not connect, warm-up or close).
  const measured = waitForMessage(proc, 'measured', 120_000 + options.duration * 1000);
  const meter = startCpuMeter({ writer: proc.pid, kafka: kafkaPid });
  await measured;
  const cpu = meter();
  const { result } = await waitForMessage(proc, 'result', 60_000);
  await stopChild(proc, 5_000);
  // % of one core over the window → µs per event measured in that window.
  const brokerUs = cpu.kafka === null || cpu.kafka === undefined ? null : (cpu.kafka / 100) * 1e6 / result.perS;
  return { ...result, settings, brokerUs, cpu };
}

/** The version of `pkg` as `file` would load it (an older build has its own node_modules). */
function packageVersion(file, pkg) {
  try {
    const entry = createRequire(file).resolve(pkg);
    for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
      const manifest = join(dir, 'package.json');
      if (!existsSync(manifest)) continue;
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8'));
      if (name === pkg) return version;
    }
  } catch {
    // not resolvable from there: reported as unknown
  }
  return '(version unknown)';
}

/** True if `file` or a module it imports (relative imports, transitively) imports `pkg`. */
function importsPackage(file, pkg, seen = new Set()) {
  if (seen.has(file)) return false;
  seen.add(file);
  let source;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  for (const [, spec] of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]/g)) {
    if (spec === pkg || spec.startsWith(`${pkg}/`)) return true;
    if (spec.startsWith('.') && importsPackage(join(dirname(file), spec), pkg, seen)) return true;
  }
  return false;
}

// ---- report ------------------------------------------------------------------

function report({ writerFile, client, rows }) {
  const o = options;
  const env = Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_') || k === 'KAFKA_BROKERS').map(([k, v]) => `${k}=${shellQuote(v)}`);
  const out = [];
  out.push('# Kafka writer alone');
  out.push('');
  out.push(`- date: ${new Date().toISOString()}`);
  out.push(`- command: \`${[...env, 'node bench/kafka-writer.mjs'].join(' ')}\``);
  out.push(`- node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min: other work on the machine skews every figure)`);
  out.push(`- writer: ${writerFile} (${client}); the A/B against the home-made writer it replaced is in docs/kafka-client.md (2026-11-24)`);
  out.push(`- ${o.rounds} round${o.rounds === 1 ? '' : 's'}; per round a fresh child process and a fresh topic of ${o.partitions} partitions on ${o.brokers.join(',')}; ${o.warmup} s warm-up, then ${o.duration} s measured`);
  out.push(`- load: ${o.concurrency} appenders, each awaiting append() in a loop; event records with ${o.bodyBytes} B bodies over ${o.keys} partition keys; acks=all`);
  const settings = rows.find((r) => r.settings)?.settings;
  if (settings) out.push(`- producer settings: \`${JSON.stringify(settings)}\``);
  out.push("- writer CPU: process.cpuUsage() of the writer's process over the window (all its threads, the load loop included); broker CPU: the broker process from /proc over the same window, on a shared broker (others' traffic counts too); others: every other process on the machine (noise)");
  out.push('- check: the topic holds exactly the acked records (ListOffsets, high - low, summed over partitions) and no append failed');
  out.push('');
  const cells = (r) => [int(r.perS), r.writerUs.toFixed(1), fixed(r.brokerUs), ms(r.p50), ms(r.p99)];
  out.push(table(
    ['round', 'events/s', 'writer CPU µs/event', 'broker CPU µs/event', 'p50 ms', 'p99 ms', 'acked (incl. warm-up)', 'failed', 'in topic', 'check', 'writer / broker / others CPU'],
    [
      ...rows.map((r) => [
        r.round, ...cells(r), int(r.acked), int(r.failed), int(r.inTopic), r.ok ? 'ok' : 'MISMATCH',
        `${r.cpu.writer ?? '–'} / ${r.cpu.kafka ?? '–'} / ${r.cpu.others ?? '–'} %`,
      ]),
      // Each column's own median (not one round's row).
      ['median', ...cells(medians(rows, ['perS', 'writerUs', 'brokerUs', 'p50', 'p99'])), '', '', '', '', `${medianCpu(rows, 'writer')} / ${medianCpu(rows, 'kafka')} / ${medianCpu(rows, 'others')} %`],
    ],
  ));
  out.push('');
  out.push(`- every topic held exactly its acked records: ${rows.every((r) => r.ok) ? 'yes' : 'NO (see check column)'}`);
  const errors = rows.filter((r) => r.firstError).map((r) => `round ${r.round}: ${r.firstError}`);
  if (errors.length) out.push(`- first append error: ${errors.join('; ')}`);
  out.push('');
  return out.join('\n');
}

const fixed = (n) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(1));
const pick = (obj, keys) => Object.fromEntries(keys.map((k) => [k, obj[k]]));
const shellQuote = (v) => (/^[\w@%+=:,./-]*$/.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`);
/** Per key, the median over rows of the values that are known. */
const medians = (rows, keys) => Object.fromEntries(keys.map((k) => [k, median(rows.map((r) => r[k]).filter((v) => v !== null && v !== undefined && Number.isFinite(v)))]));
const medianCpu = (rows, who) => {
  const m = median(rows.map((r) => r.cpu[who]).filter((v) => v !== null && v !== undefined));
  return m === null ? '–' : Math.round(m);
};

function median(values) {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// ---- child: the writer under load --------------------------------------------

async function child(spec) {
  const { default: pino } = await import('pino');
  const log = pino({ level: 'warn' });
  const { KafkaWriter, settings } = await loadWriter(spec);
  const writer = new KafkaWriter(settings, log);
  await writer.connect();
  process.send({ type: 'ready', settings: settings.producer });
  await new Promise((resolve) => process.once('message', resolve));

  const body = Buffer.alloc(spec.bodyBytes, 'x');
  const runTag = randomBytes(4).toString('hex');
  let seq = 0;
  let acked = 0;
  let failed = 0;
  let firstError = null;
  const record = () => {
    const i = seq++;
    return {
      v: 1, id: `evt_kw${runTag}${i}`, tenantPublicId: 'ten_kw', workspaceId: '1', queueId: '1', queueName: 'kw', receivedAt: Date.now(),
      contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: `k${i % spec.keys}`, path: null, body,
    };
  };
  /** N appenders until `seconds` have passed; each finishes the append it started. */
  async function load(seconds, latencies) {
    const until = performance.now() + seconds * 1000;
    let done = 0;
    await Promise.all(
      Array.from({ length: spec.concurrency }, async () => {
        while (performance.now() < until) {
          const t0 = performance.now();
          try {
            await writer.append(record());
            acked++;
            done++;
            latencies?.push(performance.now() - t0);
          } catch (err) {
            failed++;
            firstError ??= err.message;
          }
        }
      }),
    );
    return done;
  }

  if (spec.warmup > 0) await load(spec.warmup, null);
  process.send({ type: 'measuring' });
  const latencies = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const events = await load(spec.duration, latencies);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  process.send({ type: 'measured' });
  await writer.close();

  latencies.sort((a, b) => a - b);
  const at = (q) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] : null);
  const result = {
    events, seconds, perS: events / seconds, writerUs: (cpu.user + cpu.system) / Math.max(1, events),
    p50: at(0.5), p99: at(0.99), acked, failed, firstError,
  };
  process.send({ type: 'result', result }, () => process.disconnect());
}

/** The writer class and its settings (the `kafka` config section), from the dist/ under test. */
async function loadWriter(spec) {
  const dist = (path) => pathToFileURL(join(spec.dist, path)).href;
  const { KafkaWriter } = await import(dist('log/kafka-writer.js'));
  const { loadConfig } = await import(dist('config/load-config.js'));
  const { kafka } = loadConfig({}, { kafka: { brokers: spec.brokers, clientId: 'sg-bench-kw', topic: spec.topic, partitions: spec.partitions } });
  return { KafkaWriter, settings: { ...kafka, producer: { ...kafka.producer, ...spec.producer } } };
}
