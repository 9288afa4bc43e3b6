// What counting the traffic rollups costs per event, in this process alone
// (no HTTP, no broker): the recorder's share of the CPU that bench/cpu-ab.mjs
// measures end to end, where it is below the noise of a shared box.
//
//   npm run build && nice -n 19 node bench/stats-cost.mjs
//
// 1. The hot path: BENCH_EVENTS (1 M) attempt messages and as many accepted
//    answers published on the channels, with the recorder subscribed (B) and
//    without (A), alternated over 5 rounds; CPU µs per event (process.cpuUsage).
// 2. The flush: one write of what a second of traffic leaves (BENCH_QUEUES
//    queues: one cell per queue, three rows each) to a scratch database on the
//    machine's Postgres, the node's CPU per flush (JSON, the query), median of 50.
import postgres from 'postgres';
import { answeredChannel, attemptChannel } from '../dist/observability/channels.js';
import { createLogger } from '../dist/observability/logger.js';
import { bootstrap } from '../dist/api/setup/bootstrap.js';
import { migrate } from '../dist/storage/migrate.js';
import { ROLLUP_TABLES, RollupRepo } from '../dist/stats/rollup-repo.js';
import { Rollup, rowsOf } from '../dist/stats/rollup.js';
import { StatsRecorder } from '../dist/stats/stats-recorder.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const QUEUES = Number(process.env.BENCH_QUEUES ?? 10);
const ADMIN = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const log = createLogger('silent');

const records = Array.from({ length: QUEUES }, (_, i) => ({ tenantPublicId: 'ten_bench', queueName: `queue-${i}`, receivedAt: Date.now() }));
const answers = records.map((r) => ({ route: '/events/:tenant/:queue', status: 202, ingress: { queue: { tenantPublicId: r.tenantPublicId, queueName: r.queueName }, replayed: false } }));
const messages = records.map((record, i) => ({ record, outcome: i % 50 === 0 ? 'retry' : 'delivered', status: i % 50 === 0 ? 503 : 200, failureKind: null }));

/** CPU µs per event of publishing one accepted answer and one delivered attempt per event. */
function publishAll() {
  const before = process.cpuUsage();
  for (let i = 0; i < EVENTS; i++) {
    const q = i % QUEUES;
    // As the data path does: it builds and publishes only when someone listens.
    if (answeredChannel.hasSubscribers) answeredChannel.publish(answers[q]);
    if (attemptChannel.hasSubscribers) attemptChannel.publish(messages[q]);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / EVENTS;
}

const noWrite = { add: async () => {} };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const off = [];
const on = [];
publishAll(); // warm-up
for (let round = 0; round < 5; round++) {
  off.push(publishAll());
  const recorder = new StatsRecorder(noWrite, { flushMs: 3_600_000, ingress: true, delivery: true }, log);
  recorder.start();
  on.push(publishAll());
  await recorder.stop();
}
console.log(`hot path: without ${median(off).toFixed(3)} µs/event, with the recorder ${median(on).toFixed(3)} µs/event: +${(median(on) - median(off)).toFixed(3)} µs per event (accepted + attempt)`);

// The flush of a second's cells.
const name = `sg_bench_statscost_${Date.now().toString(36)}`;
const admin = postgres(ADMIN, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE ${name}`);
let flushUs;
try {
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  await migrate(sql);
  const creds = await bootstrap(sql, 'bench@example.com');
  const repo = new RollupRepo(sql);
  const cpu = [];
  const wall = [];
  for (let i = 0; i < 60; i++) {
    const r = new Rollup();
    const now = Date.now();
    for (let q = 0; q < QUEUES; q++) {
      r.accepted(creds.tenantPublicId, `queue-${q}`, now);
      r.attempt(creds.tenantPublicId, `queue-${q}`, now, 'delivered', '2xx', 5 + q);
      r.attempt(creds.tenantPublicId, `queue-${q}`, now, 'retry', '5xx', null);
    }
    const before = process.cpuUsage();
    const t0 = performance.now();
    const cells = r.take();
    await repo.add(ROLLUP_TABLES.map(([, seconds]) => rowsOf(cells, seconds)));
    const used = process.cpuUsage(before);
    if (i >= 10) {
      cpu.push(used.user + used.system);
      wall.push(performance.now() - t0);
    }
  }
  flushUs = median(cpu);
  console.log(`flush of ${QUEUES} cells (${QUEUES * ROLLUP_TABLES.length} rows): ${flushUs.toFixed(0)} µs CPU in the node, ${median(wall).toFixed(1)} ms wall (median of 50)`);
  for (const rate of [100, 1000, 5000]) console.log(`  at ${rate} delivered events/s: ${(flushUs / rate).toFixed(3)} µs per event`);
  await sql.end();
} finally {
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
