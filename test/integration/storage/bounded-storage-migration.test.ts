import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { connectDatabase } from '../../../src/storage/db.js';
import { migrate } from '../../../src/storage/migrate.js';
import { DeliveryRecordRepo, streamKey } from '../../../src/storage/delivery-record-repo.js';
import { freshDatabase } from '../../helpers/backends.js';

const DIR = fileURLToPath(new URL('../../../src/storage/migrations/', import.meta.url));
const MIGRATION = '070_bounded_storage.sql';

/**
 * Migration 070 on a database that already has event and delivery records
 * (made by the migrations before it): every row survives, now in daily
 * partitions, and reads as before, through the migrations after it too
 * (090 folds the deliveries into the event rows).
 */
t.test('a populated database is converted to partitioned tables, rows kept', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 2);
  t.teardown(() => sql.end());
  // The schema as it was before 070, recorded as migrate() records it.
  await sql`CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
  for (const file of readdirSync(DIR).filter((f) => /^\d+_[\w-]+\.sql$/.test(f) && f < MIGRATION).sort()) {
    await sql.unsafe(readFileSync(DIR + file, 'utf8'));
    await sql`INSERT INTO schema_migrations (name) VALUES (${file})`;
  }
  const [lic] = await sql<{ id: string }[]>`INSERT INTO licenses (public_id, email) VALUES ('lic_m', 'm@x') RETURNING id`;
  const [ws] = await sql<{ id: string }[]>`INSERT INTO workspaces (public_id, license_id, name) VALUES ('ten_m', ${lic!.id}, 'm') RETURNING id`;
  const [tg] = await sql<{ id: string }[]>`INSERT INTO targets (public_id, workspace_id, name, url) VALUES ('tgt_m', ${ws!.id}, 'shop', 'http://127.0.0.1:9/') RETURNING id`;
  // 3 days of events, 500 a day, each delivered; one delivery whose event was never recorded.
  await sql`
    INSERT INTO event_log (event_id, workspace_id, queue_name, event_type, received_at, log_partition, log_offset, run_id, target_ids)
    SELECT 'evt_m' || i, ${ws!.id}, 'orders', 'order.created',
           -- Milliseconds, as delivery writes them (to_timestamp of the record's receive time).
           date_trunc('milliseconds', now()) - (i % 3) * interval '1 day' - i * interval '1 second',
           i % 4, i, CASE WHEN i % 100 = 0 THEN 'run_m' END, ARRAY[${tg!.id}]::bigint[]
    FROM generate_series(1, 1500) AS i`;
  await sql`
    INSERT INTO delivery_log (event_id, target_id, status, attempts, log_stream, log_partition, log_offset)
    SELECT event_id, ${tg!.id}, 'delivered', '[{"at":"2026-01-01T00:00:00.000Z","status":200,"durationMs":3,"error":null}]', 'g/t', log_partition, log_offset
    FROM event_log`;
  await sql`INSERT INTO delivery_log (event_id, target_id, status, log_stream, log_partition, log_offset) VALUES ('evt_orphan', ${tg!.id}, 'pending', 'g/t', 0, 9999)`;
  const retried = [
    { at: '2026-01-01T00:00:00.000Z', status: null, durationMs: 5000, error: 'timeout, "5 s"' },
    { at: '2026-01-01T00:00:05.000Z', status: 200, durationMs: 2, error: null, simulated: true },
  ];
  await sql`UPDATE delivery_log SET status = 'failed', attempts = ${sql.json(retried)} WHERE event_id = 'evt_m8'`;

  const applied = await migrate(sql);
  t.equal(applied[0], MIGRATION, '070 first: only it and what came after it were left to apply');
  t.ok(applied.every((f) => f >= MIGRATION), 'nothing older applied again');

  const [counts] = await sql<{ events: number; delivered: number; inDefault: number }[]>`
    SELECT (SELECT count(*)::int FROM event_log) AS events,
           (SELECT count(*)::int FROM event_log WHERE deliveries LIKE ${`${tg!.id}:d:%`}) AS delivered,
           (SELECT count(*)::int FROM event_log_default) AS "inDefault"`;
  t.same(counts, { events: 1500, delivered: 1499, inDefault: 0 }, 'every event kept with its delivery, none in DEFAULT');
  const parts = await sql<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'event_log'::regclass AND c.relname <> 'event_log_default' ORDER BY 1`;
  t.ok(parts.length >= 3 && parts.length <= 4, `daily partitions: ${parts.map((p) => p.name).join(', ')}`);
  t.ok(parts.every((p) => /^event_log_p\d{8}t000000_\d{8}t000000$/.test(p.name)), 'named by their day');
  const [kinds] = await sql<{ kind: string }[]>`SELECT relkind::text AS kind FROM pg_class WHERE relname = 'event_log'`;
  t.equal(kinds!.kind, 'p', 'event_log is partitioned');
  t.equal((await sql`SELECT 1 FROM pg_class WHERE relname IN ('event_log_unpartitioned', 'delivery_log_unpartitioned', 'delivery_log')`).length, 0, 'old tables gone');

  const repo = new DeliveryRecordRepo(sql);
  const event = await repo.event(ws!.id, 'evt_m7');
  t.equal(event?.deliveries.length, 1, 'an event reads with its delivery');
  t.equal(event?.deliveries[0]?.status, 'delivered');
  t.same(event?.deliveries[0]?.attempts, [{ at: '2026-01-01T00:00:00.000Z', status: 200, durationMs: 3, error: null }], 'attempts converted to the compact form, read back the same');
  t.equal((await repo.runEvents(ws!.id, 'run_m', 100)).length, 15, 'sandbox run events');
  const failed = await repo.event(ws!.id, 'evt_m8');
  t.equal(failed?.deliveries[0]?.status, 'failed');
  t.same(failed?.deliveries[0]?.attempts, retried, 'errors and simulated attempts converted too');
  const [stream] = await sql<{ k: number }[]>`SELECT DISTINCT log_stream AS k FROM event_log`;
  t.equal(stream!.k, streamKey('g/t'), 'the stream as the code keys it');
  const replayed = await sql<{ eventId: string; at: Date; o: string }[]>`
    SELECT event_id AS "eventId", received_at AS at, log_offset::text AS o FROM event_log WHERE log_partition = 3 AND log_offset <= 10`;
  const check = await repo.replayCheck('g/t', replayed.map((r) => ({ eventId: r.eventId, receivedAt: r.at.getTime(), offset: BigInt(r.o) })));
  t.same(check.finished.map((x) => x.offset).sort(), [3n, 7n], 'the replay check reads migrated rows (partition 3, offsets 3 and 7)');
  const [orphan] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log WHERE log_offset = 9999`;
  t.equal(orphan!.n, 0, 'a delivery without its event has no event to be shown under (gone in 090)');
  // A new delivery of a migrated event updates the same row.
  await repo.writeBatch([], [{
    eventId: 'evt_m7', targetId: tg!.id, status: 'delivered', attempts: [{ at: new Date().toISOString(), status: 200, durationMs: 1, error: null }],
    stream: 'g/t', partition: 3, offset: 7n, receivedAt: event!.receivedAt.getTime(),
  }]);
  t.equal((await repo.event(ws!.id, 'evt_m7'))?.deliveries[0]?.attempts.length, 2, 'appended to the migrated row');
  t.same(await migrate(sql), [], 'applied once');
});

t.test('an empty database migrates too', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 1);
  t.teardown(() => sql.end());
  t.ok((await migrate(sql)).includes(MIGRATION));
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'event_log'::regclass`;
  t.equal(row!.n, 1, 'only DEFAULT until a node creates the time partitions');
});
