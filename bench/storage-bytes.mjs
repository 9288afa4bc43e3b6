// What one accepted event with one target costs in Postgres (issue 24, item 4):
// N events through a real node (ingress → embedded log → delivery → receiver),
// then the bytes of the per-event tables with their indexes (every partition,
// pg_total_relation_size) divided by the (event, target) count, and
// the WAL the run wrote (pg_current_wal_lsn before and after, so other users of
// the machine's Postgres add to it: run it on a quiet database).
//
//   npm run build && nice -n 19 node bench/storage-bytes.mjs [events=20000]
//
// A scratch database (dropped at the end), an in-process node on the embedded
// log, one queue routed to one target that answers 200 at once, bodies of 64 bytes.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { loadConfig } from '../dist/config/load-config.js';
import { startNode } from '../dist/node/node.js';
import { createLogger } from '../dist/observability/logger.js';
import { migrate } from '../dist/storage/migrate.js';
import { bootstrap } from '../dist/api/setup/bootstrap.js';
import { createBenchDatabase, dropBenchDatabase } from './lib/bench-db.mjs';

const EVENTS = Number(process.argv[2] ?? 20_000);
const CONCURRENCY = 32;

const db = await createBenchDatabase(`bytes_${Date.now().toString(36)}`);
const dataDir = mkdtempSync(join(tmpdir(), 'sg-bytes-'));
const sql = postgres(db.url, { max: 2, onnotice: () => {} });
const receiver = http.createServer((req, res) => req.resume().on('end', () => res.end()));
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
let node;
try {
  await migrate(sql);
  const creds = await bootstrap(sql, 'bytes@example.test');
  const config = loadConfig({}, {
    dataDir,
    server: { port: 0, host: '127.0.0.1' },
    database: { url: db.url },
    redis: { url: '' },
    kafka: { brokers: [] },
    delivery: { allowNetworks: ['127.0.0.0/8'], allowLoopbackInSingleNode: false },
    log: { level: 'warn' },
  });
  node = await startNode(config, createLogger('warn'));
  const base = `http://127.0.0.1:${node.port}`;
  const tenant = creds.tenantPublicId;
  const manage = { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId, 'content-type': 'application/json' };
  const put = async (path, body) => {
    const res = await fetch(`${base}/v1/tenants/${tenant}${path}`, { method: 'PUT', headers: manage, body });
    if (res.status >= 300) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
  };
  await put('/queues/orders', '{}');
  await put('/targets/shop', JSON.stringify({ url: `http://127.0.0.1:${receiver.address().port}/hook` }));
  await put('/queues/orders/targets/shop', undefined);

  const [{ lsn: walBefore }] = await sql`SELECT pg_current_wal_lsn()::text AS lsn`;
  // This database's own WAL (the server's is shared with whatever else runs):
  // read back with pg_walinspect every 2 s, before checkpoints recycle it, the
  // records touching its relations and the commit records of their transactions.
  const [{ flushed }] = await sql`SELECT pg_current_wal_flush_lsn()::text AS flushed`;
  const ownWal = { bytes: 0, error: null, from: flushed, xids: new Set() };
  const walSql = postgres(db.url, { max: 1, onnotice: () => {} });
  const readWal = async () => {
    if (ownWal.error) return;
    try {
      const [{ to }] = await walSql`SELECT pg_current_wal_flush_lsn()::text AS to`;
      const rows = await walSql`
        SELECT xid::text AS xid, resource_manager = 'Transaction' AS tx,
               block_ref ~ ('rel \\d+/' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/') AS mine,
               record_length::int AS n
        FROM pg_get_wal_records_info(${ownWal.from}::pg_lsn, ${to}::pg_lsn)`;
      for (const r of rows) if (r.mine) { ownWal.bytes += r.n; ownWal.xids.add(r.xid); }
      for (const r of rows) if (r.tx && !r.mine && ownWal.xids.has(r.xid)) ownWal.bytes += r.n;
      ownWal.from = to;
    } catch (err) {
      if (!/future|must be less/.test(err.message)) ownWal.error = err.message; // else nothing new flushed yet
    }
  };
  try {
    await walSql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`;
  } catch (err) {
    ownWal.error = err.message;
  }
  let walReading = Promise.resolve();
  const walTimer = setInterval(() => { walReading = walReading.then(readWal); }, 2_000);
  const started = Date.now();
  let next = 0;
  const body = JSON.stringify({ order: 'x'.repeat(40), n: 0 }).slice(0, 64);
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < EVENTS) {
      const i = next++;
      const res = await fetch(`${base}/events/${tenant}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': creds.ingressKey, 'content-type': 'application/json', 'x-event-type': 'order.created', 'x-partition-key': `k${i % 100}` },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 202) throw new Error(`POST answered ${res.status}`);
    }
  }));
  // Delivered and recorded: every (event, target) says delivered (before
  // migration 090 a delivery_log row each, since then a line of its event's row).
  const split = (await sql`SELECT to_regclass('delivery_log') AS r`)[0].r !== null;
  for (;;) {
    const [{ n }] = split
      ? await sql`SELECT count(*)::int AS n FROM delivery_log WHERE status = 'delivered'`
      : await sql`SELECT count(*)::int AS n FROM event_log WHERE deliveries ~ ':d:'`;
    if (n >= EVENTS) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const seconds = (Date.now() - started) / 1000;
  await node.stop();
  node = null;
  clearInterval(walTimer);
  await walReading;
  await readWal();
  await walSql.end();
  const [{ wal }] = await sql`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${walBefore}::pg_lsn)::bigint AS wal`;
  await sql`VACUUM ANALYZE`;
  const tables = split ? ['event_log', 'delivery_log'] : ['event_log'];
  const rows = [];
  let total = 0;
  for (const t of tables) {
    // Every partition (pg_partition_tree has no rows for a plain table: the table itself then).
    const [r] = await sql`
      SELECT coalesce(sum(pg_table_size(relid)), 0)::bigint AS heap,
             coalesce(sum(pg_indexes_size(relid)), 0)::bigint AS idx,
             coalesce(sum(pg_total_relation_size(relid)), 0)::bigint AS total
      FROM (SELECT relid FROM pg_partition_tree(${t}::regclass) UNION SELECT ${t}::regclass) p
      JOIN pg_class c ON c.oid = p.relid WHERE c.relkind = 'r'`;
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM ${sql(t)}`;
    rows.push({ t, n, heap: Number(r.heap), idx: Number(r.idx), total: Number(r.total) });
    total += Number(r.total);
  }
  console.log(`${EVENTS} events × 1 target in ${seconds.toFixed(1)} s`);
  console.log('| table | rows | heap+toast bytes | index bytes | total | per (event, target) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.t} | ${r.n} | ${r.heap} (${(r.heap / EVENTS).toFixed(0)}) | ${r.idx} (${(r.idx / EVENTS).toFixed(0)}) | ${r.total} | ${(r.total / EVENTS).toFixed(0)} |`);
  console.log(`| **all** | | | | ${total} | **${(total / EVENTS).toFixed(0)}** |`);
  console.log(`WAL during the run: ${wal} bytes, ${(Number(wal) / EVENTS).toFixed(0)} per (event, target) (the whole server's)`);
  console.log(ownWal.error
    ? `WAL of this database: not measured (${ownWal.error})`
    : `WAL of this database: ${ownWal.bytes} bytes, ${(ownWal.bytes / EVENTS).toFixed(0)} per (event, target) (pg_walinspect, read every 2 s during the run)`);
  const indexes = await sql`
    SELECT i.indexrelid::regclass::text AS name, pg_relation_size(i.indexrelid)::bigint AS bytes
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
    WHERE c.relname IN ('event_log', 'delivery_log') OR c.relispartition AND (c.relname LIKE 'event_log%' OR c.relname LIKE 'delivery_log%')
    ORDER BY 1`;
  for (const i of indexes) if (Number(i.bytes) > 8192) console.log(`  index ${i.name}: ${(Number(i.bytes) / EVENTS).toFixed(0)} bytes per event`);
} finally {
  if (node) await node.stop();
  receiver.close();
  await sql.end({ timeout: 5 });
  await dropBenchDatabase(db.name);
  rmSync(dataDir, { recursive: true, force: true });
}
