// What one batch of delivery records costs (DeliveryRecordRepo.writeBatch),
// without a node: events with one target each, each written in one batch with
// its delivery (delivered at the first attempt, as a backlog drain writes
// them), batches of --batch rows (attemptLog.maxBatch), into a fresh database.
// Reports per event: the Postgres backend's CPU (from /proc, the server being
// on this machine), this process's CPU, and the wall time of a batch, for each
// build given, alternating builds between rounds (the machine is shared: read
// the ratio of one run).
//
//   npm run build && node bench/delivery-records-write.mjs [--events 60000] [--batch 2000] [--rounds 3] [DIST ...]
//
// A DIST is a build's dist/ (bench/keep-build.sh keeps one aside); default ./dist.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { events: { type: 'string', default: '60000' }, batch: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
});
const events = Number(values.events);
const batch = Number(values.batch);
const rounds = Number(values.rounds);
const dists = (positionals.length > 0 ? positionals : [new URL('../dist', import.meta.url).pathname]).map((d) => resolve(d));
const TICK_US = 1e6 / 100; // USER_HZ

function procCpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US; // utime + stime
}

async function round(dist, tag) {
  const { migrate } = await import(`${dist}/storage/migrate.js`);
  const { DeliveryRecordRepo } = await import(`${dist}/storage/delivery-record-repo.js`);
  const { RetentionRepo } = await import(`${dist}/storage/retention-repo.js`);
  const db = await createBenchDatabase(`drw_${Date.now().toString(36)}_${tag}`);
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    await migrate(sql);
    const now = Date.now();
    await new RetentionRepo(sql).ensurePartitions(now, 86_400_000, 2 * 86_400_000, 5000);
    const [{ pid }] = await sql`SELECT pg_backend_pid() AS pid`;
    const repo = new DeliveryRecordRepo(sql);
    const stream = 'bench-group/bench-topic';
    const make = (i) => {
      const receivedAt = now - 60_000 + i;
      const eventId = `evt_${receivedAt.toString(36)}${String(i).padStart(12, '0')}`;
      return {
        event: {
          eventId, workspaceId: '1', queueName: 'bench', eventType: 'order.created', groupKey: null, partitionKey: `k${i % 1000}`,
          idempotencyKey: null, receivedAt, partition: i % 12, offset: BigInt(i), stream, runId: null, targetIds: ['1'],
        },
        delivery: {
          eventId, targetId: '1', status: 'delivered', stream, partition: i % 12, offset: BigInt(i), receivedAt,
          attempts: [{ at: new Date(receivedAt + 4).toISOString(), status: 200, durationMs: 3, error: null }],
        },
      };
    };
    // One batch outside the measure: the plan and the function's first call.
    const warm = Array.from({ length: Math.min(batch, 500) }, (_, i) => make(events + i));
    await repo.writeBatch(warm.map((r) => r.event), warm.map((r) => r.delivery));
    const pg0 = procCpuUs(pid);
    const me0 = process.cpuUsage();
    const t0 = performance.now();
    for (let at = 0; at < events; at += batch) {
      const rows = Array.from({ length: Math.min(batch, events - at) }, (_, i) => make(at + i));
      await repo.writeBatch(rows.map((r) => r.event), rows.map((r) => r.delivery));
    }
    const wallMs = performance.now() - t0;
    const me = process.cpuUsage(me0);
    const pgUs = procCpuUs(pid) - pg0;
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM event_log WHERE deliveries LIKE '1:d:%'`;
    if (n !== events + warm.length) throw new Error(`${n} rows delivered, expected ${events + warm.length}`);
    return { pgUs: pgUs / events, nodeUs: (me.user + me.system) / events, batchMs: wallMs / Math.ceil(events / batch), perS: events / (wallMs / 1000) };
  } finally {
    await sql.end({ timeout: 5 });
    await dropBenchDatabase(db.name);
  }
}

const results = dists.map(() => []);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? dists.map((_, i) => i) : dists.map((_, i) => dists.length - 1 - i);
  for (const i of order) {
    const res = await round(dists[i], `${r}_${i}`);
    results[i].push(res);
    console.log(`round ${r + 1} ${dists[i]}: postgres ${res.pgUs.toFixed(1)} µs/event, node ${res.nodeUs.toFixed(1)} µs/event, ${res.batchMs.toFixed(1)} ms/batch, ${Math.round(res.perS)} events/s`);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`\n| build | postgres µs/event | node µs/event | ms per batch of ${batch} | events/s |\n|---|---:|---:|---:|---:|`);
dists.forEach((d, i) => {
  const rs = results[i];
  console.log(`| ${d} | ${median(rs.map((x) => x.pgUs)).toFixed(1)} | ${median(rs.map((x) => x.nodeUs)).toFixed(1)} | ${median(rs.map((x) => x.batchMs)).toFixed(1)} | ${Math.round(median(rs.map((x) => x.perS)))} |`);
});
