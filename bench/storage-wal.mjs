// Bytes and WAL per (event, target) of the delivery records' own writes
// (DeliveryRecordRepo.writeBatch), without a node: 20,000 events with one
// target in batches of 200, each outcome written in the same batch as its event
// (`same`: what a receiver answering within attemptLog.flushMs gives) or in the
// next one (`later`: slow receivers, retries: the event's row is written again).
// WAL is this database's own, read back with pg_walinspect after every batch
// (the machine's Postgres is shared: its total WAL says little).
//
//   npm run build && node bench/storage-wal.mjs [same|later] [dist dir=./dist]
//
// The dist dir may be another checkout's build (the same script measures main).
import { resolve } from 'node:path';
import postgres from 'postgres';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';
const mode = process.argv[2] ?? 'same';
const dist = resolve(process.argv[3] ?? new URL('../dist', import.meta.url).pathname);
const { migrate } = await import(`${dist}/storage/migrate.js`);
const { DeliveryRecordRepo } = await import(`${dist}/storage/delivery-record-repo.js`);
const { RetentionRepo } = await import(`${dist}/storage/retention-repo.js`);
const db = await createBenchDatabase(`wal_${Date.now().toString(36)}`);
const sql = postgres(db.url, { max: 2, onnotice: () => {} });
try {
  await migrate(sql);
  await new RetentionRepo(sql).ensurePartitions(Date.now(), 86_400_000, 2 * 86_400_000, 5000);
  await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`;
  const [{ oid }] = await sql`SELECT oid::text FROM pg_database WHERE datname = current_database()`;
  const repo = new DeliveryRecordRepo(sql);
  const xids = new Set();
  let own = 0;
  let [{ from }] = await sql`SELECT pg_current_wal_flush_lsn()::text AS from`;
  const read = async () => {
    const [{ to }] = await sql`SELECT pg_current_wal_flush_lsn()::text AS to`;
    let rows;
    try {
      rows = await sql`SELECT xid::text AS xid, resource_manager = 'Transaction' AS tx, block_ref ~ ${`rel \\d+/${oid}/`} AS mine, record_length::int AS n FROM pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn)`;
    } catch (err) {
      if (/future|must be less/.test(err.message)) return; // nothing new flushed yet: next time
      throw err;
    }
    for (const r of rows) if (r.mine) { own += r.n; xids.add(r.xid); }
    for (const r of rows) if (r.tx && !r.mine && xids.has(r.xid)) own += r.n;
    from = to;
  };
  const N = 20000, B = 200, t0 = Date.now();
  const ev = (i) => ({ eventId: `evt_AaIc${String(i).padStart(20, '0')}`, workspaceId: '1', queueName: 'orders', eventType: 'order.created', groupKey: null, partitionKey: `k${i % 100}`, idempotencyKey: null, receivedAt: t0 + i, partition: i % 4, offset: BigInt(i), stream: 'g/t', runId: null, targetIds: ['1'] });
  const dl = (i) => ({ eventId: ev(i).eventId, targetId: '1', status: 'delivered', attempts: [{ at: new Date(t0 + i + 4).toISOString(), status: 200, durationMs: 3, error: null }], stream: 'g/t', partition: i % 4, offset: BigInt(i), receivedAt: t0 + i });
  for (let k = 0; k <= N / B; k++) {
    const events = k < N / B ? Array.from({ length: B }, (_, j) => ev(k * B + j)) : [];
    const from_ = mode === 'same' ? k : k - 1;
    const deliveries = from_ >= 0 && from_ < N / B ? Array.from({ length: B }, (_, j) => dl(from_ * B + j)) : [];
    await repo.writeBatch(events, deliveries);
    await read();
  }
  for (let i = 0; i < 20; i++) { await new Promise((r) => setTimeout(r, 250)); await read(); }
  await sql`VACUUM ANALYZE`;
  const [sz] = await sql`SELECT sum(pg_table_size(relid))::bigint AS heap, sum(pg_indexes_size(relid))::bigint AS idx FROM pg_partition_tree('event_log') p JOIN pg_class c ON c.oid = p.relid WHERE c.relkind = 'r'`;
  const [sz2] = await sql`SELECT to_regclass('delivery_log') IS NOT NULL AS split`;
  let dheap = 0, didx = 0;
  if (sz2.split) { const [d] = await sql`SELECT sum(pg_table_size(relid))::bigint AS heap, sum(pg_indexes_size(relid))::bigint AS idx FROM pg_partition_tree('delivery_log') p JOIN pg_class c ON c.oid = p.relid WHERE c.relkind = 'r'`; dheap = Number(d.heap); didx = Number(d.idx); }
  console.log(`${mode}: WAL ${(own / N).toFixed(0)} B/event; bytes ${((Number(sz.heap) + Number(sz.idx) + dheap + didx) / N).toFixed(0)} (heap ${((Number(sz.heap) + dheap) / N).toFixed(0)}, idx ${((Number(sz.idx) + didx) / N).toFixed(0)})`);
} finally {
  await sql.end();
  await dropBenchDatabase(db.name);
}
