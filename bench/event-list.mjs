// The console's event list (GET /v1/tenants/{t}/queues/{name}/events) on a
// queue of 10 events and one of 100 000: how long a page takes in Postgres,
// per filter, median of 20 runs. Issue 14 asks that a queue with 100 000
// events open as fast as one with 10.
//
//   npm run build && nice -n 19 node bench/event-list.mjs [events=100000]
//
// Uses a scratch database on the machine's Postgres (dropped at the end) and
// the compiled repository (dist/), rows made by generate_series: 2 targets,
// every event delivered to `good`, 1 in 100 failed on `flaky`, 8 event types.
import postgres from 'postgres';
import { migrate } from '../dist/storage/migrate.js';
import { EventListRepo } from '../dist/storage/event-list-repo.js';
import { streamKey } from '../dist/storage/delivery-record-repo.js';
import { RetentionRepo } from '../dist/storage/retention-repo.js';

const ADMIN = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const BIG = Number(process.argv[2] ?? 100_000);
const RUNS = 20;

const name = `sg_bench_evlist_${Date.now().toString(36)}`;
const admin = postgres(ADMIN, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN);
url.pathname = `/${name}`;
const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });

try {
  await migrate(sql);
  // 5-minute partitions (retention.hours 1) over the rows' 17 minutes, as the sweep makes them.
  await new RetentionRepo(sql).ensurePartitions(Date.now() - BIG * 10 - 60_000, 300_000, BIG * 10 + 120_000, 5_000);
  const [lic] = await sql`INSERT INTO licenses (public_id, email) VALUES ('lic_bench', 'b@x') RETURNING id`;
  const [ws] = await sql`INSERT INTO workspaces (public_id, license_id, name) VALUES ('ten_bench', ${lic.id}, 'bench') RETURNING id`;
  const split = (await sql`SELECT to_regclass('delivery_log') AS r`)[0].r !== null;
  const targets = {};
  for (const t of ['good', 'flaky']) {
    const [row] = await sql`INSERT INTO targets (public_id, workspace_id, name, url) VALUES (${`tgt_${t}`}, ${ws.id}, ${t}, 'http://127.0.0.1:9/') RETURNING id`;
    targets[t] = row.id;
  }
  for (const [queue, n] of [['small', 10], ['big', BIG]]) {
    // Event ids shaped like real ones (evt_ + 24 characters), receive times one per 10 ms.
    // Before migration 090 a delivery_log row per (event, target); since, a line each in the event's row.
    if (split) {
      await sql`
        INSERT INTO event_log (event_id, workspace_id, queue_name, event_type, partition_key, received_at, log_partition, log_offset, target_ids)
        SELECT 'evt_' || ${queue} || lpad(i::text, 24 - length(${queue}), '0'), ${ws.id}, ${queue}, 'type.' || (i % 8), 'key-' || (i % 1000),
               now() - (${n} - i) * interval '10 milliseconds', i % 4, i, ARRAY[${targets.good}, ${targets.flaky}]::bigint[]
        FROM generate_series(1, ${n}) AS i`;
      await sql`
        INSERT INTO delivery_log (received_at, log_offset, target_id, log_partition, log_stream, status, attempts)
        SELECT e.received_at, e.log_offset, t.id, e.log_partition, ${streamKey('g/t')},
               CASE WHEN t.id = ${targets.flaky} AND e.log_offset % 100 = 0 THEN 'failed' ELSE 'delivered' END, '[5,200,3]'
        FROM event_log e CROSS JOIN (VALUES (${targets.good}::bigint), (${targets.flaky}::bigint)) AS t(id)
        WHERE e.queue_name = ${queue}`;
    } else {
      await sql`
        INSERT INTO event_log (event_id, workspace_id, queue_name, event_type, partition_key, received_at, log_partition, log_offset, log_stream, deliveries)
        SELECT 'evt_' || ${queue} || lpad(i::text, 24 - length(${queue}), '0'), ${ws.id}, ${queue}, 'type.' || (i % 8), 'key-' || (i % 1000),
               now() - (${n} - i) * interval '10 milliseconds', i % 4, i, ${streamKey('g/t')},
               ${targets.good} || ':d:8:[5,200,3]' || chr(10) || ${targets.flaky} || ':' || CASE WHEN i % 100 = 0 THEN 'f' ELSE 'd' END || ':8:[5,200,3]'
        FROM generate_series(1, ${n}) AS i`;
    }
  }
  await sql`ANALYZE`;

  const repo = new EventListRepo(sql);
  const base = (queue) => ({ workspaceId: ws.id, queueName: queue, limit: 50 });
  const cases = [
    ['first page, no filter', (q) => base(q)],
    ['status=failed&target=flaky', (q) => ({ ...base(q), status: 'failed', targetId: targets.flaky })],
    ['status=failed (any target)', (q) => ({ ...base(q), status: 'failed' })],
    ['eventType=type.3', (q) => ({ ...base(q), eventType: 'type.3' })],
    ['partitionKey=key-7', (q) => ({ ...base(q), partitionKey: 'key-7' })],
  ];
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const time = async (filter) => {
    const ms = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = process.hrtime.bigint();
      await repo.page(filter);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return median(ms);
  };
  console.log(`| page of 50 | queue of 10 | queue of ${BIG} |`);
  console.log('|---|---|---|');
  for (const [label, make] of cases) {
    const small = await time(make('small'));
    const big = await time(make('big'));
    console.log(`| ${label} | ${small.toFixed(2)} ms | ${big.toFixed(2)} ms |`);
  }
  // A page deep in the big queue: the cursor of page 200 (keyset, no OFFSET).
  let after;
  for (let i = 0; i < 200; i++) {
    const { items } = await repo.page({ ...base('big'), ...(after ? { after } : {}) });
    after = items[items.length - 1]?.position;
  }
  console.log(`| page 201 by cursor, no filter | | ${(await time({ ...base('big'), after })).toFixed(2)} ms |`);
} finally {
  await sql.end();
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
