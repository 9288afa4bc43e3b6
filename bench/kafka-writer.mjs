/**
 * `node bench/kafka-writer.mjs` (after `npm run build`): the Kafka writer
 * alone, A/B. The writer in dist/ (KafkaWriter on @platformatic/kafka) against
 * the home-made one as of f9588fd (bench/lib/legacy-kafka-writer/), in
 * alternating rounds, each writer in its own child process with a fresh topic:
 *
 *   orchestrator ── creates topic ──► broker
 *        │ fork                          ▲
 *        ▼                               │ produce, acks=all
 *   child: N appenders ──► KafkaWriter ──┘   (warm-up, then the measured window)
 *        │ 'measuring' / 'measured' over IPC: the orchestrator reads the
 *        │ broker's CPU from /proc over the same window
 *        ▼
 *   orchestrator: ListOffsets == acked? ── deletes topic
 *
 * Per round and writer: events/s, the writer process's CPU per event
 * (process.cpuUsage: its own threads only, and the load loop, which is the
 * same for both), the broker's CPU per event, p50/p99 of append(), and whether
 * the topic holds exactly the records that were acked. Each writer runs with
 * the producer settings it shipped with (the new one: config/default.yaml via
 * dist/; the legacy one: its f9588fd defaults), plus BENCH_PRODUCER.
 *
 * Options (env): BENCH_ROUNDS (3), BENCH_DURATION (5 s measured per writer and
 * round), BENCH_WARMUP (1 s), BENCH_CONCURRENCY (50 appenders awaiting their
 * append in a loop), BENCH_KEYS (1000 partition keys), BENCH_BODY_BYTES
 * (1024), BENCH_PARTITIONS (12), BENCH_WRITERS (new,legacy: the two writers
 * compared, first over second; legacy,legacy runs without the new dist/),
 * BENCH_PRODUCER (JSON merged into both writers' producer settings, e.g.
 * '{"lingerMs":2}'), KAFKA_BROKERS (127.0.0.1:9092).
 * Results: console and bench/kafka-writer.md.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkChild, stopChild, waitForMessage } from './lib/children.mjs';
import { onCleanup, runWithCleanup } from './lib/cleanup.mjs';
import { findPid, startCpuMeter } from './lib/cpu.mjs';
import { kafkaAdmin } from './lib/kafka-admin.mjs';
import { say } from './lib/say.mjs';
import { int, ms, pct, table } from './lib/table.mjs';

const SELF = fileURLToPath(import.meta.url);
const RESULTS = fileURLToPath(new URL('./kafka-writer.md', import.meta.url));
const NEW_WRITER = fileURLToPath(new URL('../dist/log/kafka-writer.js', import.meta.url));
const LEGACY_WRITER = new URL('./lib/legacy-kafka-writer/index.js', import.meta.url).href;
const WRITERS = ['new', 'legacy'];

const num = (name, def) => Number(process.env[name] ?? def);
const options = {
  rounds: num('BENCH_ROUNDS', 3),
  duration: num('BENCH_DURATION', 5),
  warmup: num('BENCH_WARMUP', 1),
  concurrency: num('BENCH_CONCURRENCY', 50),
  keys: num('BENCH_KEYS', 1000),
  bodyBytes: num('BENCH_BODY_BYTES', 1024),
  partitions: num('BENCH_PARTITIONS', 12),
  writers: (process.env.BENCH_WRITERS ?? WRITERS.join(',')).split(',').map((w) => w.trim()).filter(Boolean),
  producer: JSON.parse(process.env.BENCH_PRODUCER || '{}'),
  brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
};

if (process.argv[2] === 'child') await child(JSON.parse(process.argv[3]));
else runWithCleanup(main);

// ---- orchestrator ------------------------------------------------------------

async function main() {
  const { writers } = options;
  if (writers.length !== 2 || !writers.every((w) => WRITERS.includes(w))) {
    throw new Error(`BENCH_WRITERS=${process.env.BENCH_WRITERS}: two of ${WRITERS.join(', ')}, e.g. new,legacy`);
  }
  // A dist/ still built from the home-made writer would silently make this legacy against legacy.
  if (writers.includes('new') && !importsPackage(NEW_WRITER, '@platformatic/kafka')) {
    throw new Error('dist/log/kafka-writer.js does not use @platformatic/kafka: rebuild dist/ from the new writer (`npm run build`), or run BENCH_WRITERS=legacy,legacy');
  }
  // Same writer twice (a smoke run): tell the rows apart.
  const labels = writers[0] === writers[1] ? writers.map((w, i) => `${w}#${i + 1}`) : writers;
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const kafkaPid = findPid('kafka.Kafka');
  const admin = kafkaAdmin(options.brokers);
  const topics = new Set();
  onCleanup(async () => {
    for (const topic of topics) await admin.deleteTopic(topic).catch((err) => say(`cleanup: delete ${topic}: ${err.message}`));
    await admin.close().catch(() => {});
  });
  say(`run ${runId}: ${labels.join(' vs ')}, ${options.rounds} round(s) of ${options.duration} s (+${options.warmup} s warm-up), ${options.concurrency} appenders; broker pid ${kafkaPid ?? 'not found'}`);

  const rows = [];
  for (let round = 1; round <= options.rounds; round++) {
    // Alternate who goes first, so drift on a shared machine does not favour one side.
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    for (const i of order) {
      const writer = writers[i];
      const topic = `sg-bench-kw-${runId}-r${round}-${labels[i].replace('#', '')}`;
      topics.add(topic);
      await admin.createTopic(topic, options.partitions);
      const result = await runWriter({ writer, topic, kafkaPid, name: `${labels[i]} round ${round}` });
      result.inTopic = await admin.countEvents(topic);
      result.ok = result.failed === 0 && result.inTopic === result.acked;
      await admin.deleteTopic(topic);
      topics.delete(topic);
      rows.push({ round, label: labels[i], index: i, ...result });
      say(
        `round ${round} ${labels[i]}: ${int(result.perS)} ev/s, ${result.writerUs.toFixed(1)} µs CPU/event (broker ${fixed(result.brokerUs)}), ` +
          `p50 ${ms(result.p50)} p99 ${ms(result.p99)} ms; acked ${result.acked}, failed ${result.failed}, in topic ${result.inTopic}${result.ok ? '' : '  <-- MISMATCH'}`,
      );
    }
  }

  const text = report({ labels, rows });
  process.stdout.write(`\n${text}`);
  await writeFile(RESULTS, text);
  say(`written ${RESULTS}`);
  if (rows.some((r) => !r.ok)) throw new Error('a topic does not hold exactly the acked records: see the report');
}

/** One writer, one round: a fresh child process, measured over the window it announces. */
async function runWriter({ writer, topic, kafkaPid, name }) {
  const spec = { writer, topic, brokers: options.brokers, ...pick(options, ['duration', 'warmup', 'concurrency', 'keys', 'bodyBytes', 'partitions', 'producer']) };
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

function report({ labels, rows }) {
  const o = options;
  const env = Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_') || k === 'KAFKA_BROKERS').map(([k, v]) => `${k}=${shellQuote(v)}`);
  const out = [];
  out.push(`# Kafka writer A/B: ${labels[0]} against ${labels[1]}`);
  out.push('');
  out.push(`- date: ${new Date().toISOString()}`);
  out.push(`- command: \`${[...env, 'node bench/kafka-writer.mjs'].join(' ')}\``);
  out.push(`- node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min: other work on the machine skews every figure)`);
  out.push(`- ${o.rounds} round${o.rounds === 1 ? '' : 's'}, writers alternating who goes first; per writer and round a fresh child process and a fresh topic of ${o.partitions} partitions on ${o.brokers.join(',')}; ${o.warmup} s warm-up, then ${o.duration} s measured`);
  out.push(`- load: ${o.concurrency} appenders, each awaiting append() in a loop; event records with ${o.bodyBytes} B bodies over ${o.keys} partition keys; acks=all`);
  out.push('- new: dist/log/kafka-writer.js (@platformatic/kafka); legacy: the home-made writer as of f9588fd (bench/lib/legacy-kafka-writer/)');
  for (const label of labels) {
    const settings = rows.find((r) => r.label === label)?.settings;
    if (settings) out.push(`- ${label} producer settings: \`${JSON.stringify(settings)}\``);
  }
  out.push("- writer CPU: process.cpuUsage() of the writer's process over the window (all its threads, the load loop included); broker CPU: the broker process from /proc over the same window, on a shared broker (others' traffic counts too); others: every other process on the machine (noise)");
  out.push('- check: the topic holds exactly the acked records (ListOffsets, high - low, summed over partitions) and no append failed');
  out.push('');
  out.push(table(
    ['round', 'writer', 'events/s', 'writer CPU µs/event', 'broker CPU µs/event', 'p50 ms', 'p99 ms', 'acked (incl. warm-up)', 'failed', 'in topic', 'check', 'writer / broker / others CPU'],
    rows.map((r) => [
      r.round, r.label, int(r.perS), r.writerUs.toFixed(1), fixed(r.brokerUs), ms(r.p50), ms(r.p99), int(r.acked), int(r.failed), int(r.inTopic), r.ok ? 'ok' : 'MISMATCH',
      `${r.cpu.writer ?? '–'} / ${r.cpu.kafka ?? '–'} / ${r.cpu.others ?? '–'} %`,
    ]),
  ));
  out.push('');
  const ratios = [];
  for (let round = 1; round <= o.rounds; round++) {
    const [a, b] = labels.map((l) => rows.find((r) => r.round === round && r.label === l));
    if (!a || !b) continue;
    const ratio = { events: a.perS / b.perS, cpu: a.writerUs / b.writerUs, broker: a.brokerUs && b.brokerUs ? a.brokerUs / b.brokerUs : null };
    ratios.push(ratio);
    out.push(`- round ${round}, ${labels[0]} / ${labels[1]}: events/s ${pct(ratio.events)}; writer CPU per event ${pct(ratio.cpu)}; broker CPU per event ${pct(ratio.broker)}; p99 ${ms(a.p99)} vs ${ms(b.p99)} ms`);
  }
  if (ratios.length) {
    const events = median(ratios.map((r) => r.events));
    out.push(`- median over rounds, ${labels[0]} / ${labels[1]}: events/s ${pct(events)}, writer CPU per event ${pct(median(ratios.map((r) => r.cpu)))}, broker CPU per event ${pct(median(ratios.filter((r) => r.broker !== null).map((r) => r.broker)))}`);
    if (labels[0] === 'new' && labels[1] === 'legacy') {
      out.push(`- issue 12 asks ingress through the library to keep at least 85 % of the old writer's events/s; the writer alone here: ${pct(events)} (${events >= 0.85 ? 'meets' : 'BELOW'} 85 %)`);
    }
  }
  out.push(`- every topic held exactly its acked records: ${rows.every((r) => r.ok) ? 'yes' : 'NO (see check column)'}`);
  out.push('');
  return out.join('\n');
}

const fixed = (n) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(1));
const pick = (obj, keys) => Object.fromEntries(keys.map((k) => [k, obj[k]]));
const shellQuote = (v) => (/^[\w@%+=:,./-]*$/.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`);

function median(values) {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// ---- child: one writer under load --------------------------------------------

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

/** The writer class and its settings (the `kafka` config section). */
async function loadWriter(spec) {
  const base = { brokers: spec.brokers, clientId: 'sg-bench-kw', topic: spec.topic };
  if (spec.writer === 'legacy') {
    const { KafkaWriter, legacyProducerDefaults } = await import(LEGACY_WRITER);
    const settings = {
      ...base, partitions: spec.partitions, replicationFactor: 1, groupId: 'sg-bench-kw-unused', sessionTimeoutMs: 10000, heartbeatIntervalMs: 1000,
      producer: { ...legacyProducerDefaults, ...spec.producer },
    };
    return { KafkaWriter, settings };
  }
  const { KafkaWriter } = await import(new URL('../dist/log/kafka-writer.js', import.meta.url).href);
  const { loadConfig } = await import(new URL('../dist/config/load-config.js', import.meta.url).href);
  const { kafka } = loadConfig({}, { kafka: { ...base, partitions: spec.partitions } });
  return { KafkaWriter, settings: { ...kafka, producer: { ...kafka.producer, ...spec.producer } } };
}
