import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { connectDatabase } from '../../../src/storage/db.js';
import { migrate } from '../../../src/storage/migrate.js';
import { DeliveryRecordRepo, streamKey } from '../../../src/storage/delivery-record-repo.js';
import { EventListRepo } from '../../../src/storage/event-list-repo.js';
import { RedeliveryJobRepo } from '../../../src/storage/redelivery-job-repo.js';
import { freshDatabase } from '../../helpers/backends.js';

const DIR = fileURLToPath(new URL('../../../src/storage/migrations/', import.meta.url));
const MIGRATION = '090_event_deliveries.sql';
const DAY = '20260110t000000_20260111t000000';
const T = Date.parse('2026-01-10T12:00:00.000Z');

/**
 * Migration 090 on a database at 080 holding events and deliveries in the
 * two-table layout of 070: every event survives with its deliveries folded
 * into its row, in the same partitions, and reads back as the API shows it
 * (the event with its attempts, the event list's filters, bulk redelivery's
 * count, the replay check), and new writes merge into the migrated rows.
 */
t.test('a database at 080 with records: events kept with their deliveries, read back as before', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 2);
  t.teardown(() => sql.end());
  await sql`CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
  for (const file of readdirSync(DIR).filter((f) => /^\d+_[\w-]+\.sql$/.test(f) && f < MIGRATION).sort()) {
    await sql.unsafe(readFileSync(DIR + file, 'utf8'));
    await sql`INSERT INTO schema_migrations (name) VALUES (${file})`;
  }
  // One daily partition per table, as the sweep names them; older rows land in DEFAULT.
  for (const table of ['event_log', 'delivery_log']) {
    await sql.unsafe(`CREATE TABLE ${table}_p${DAY} PARTITION OF ${table} FOR VALUES FROM ('2026-01-10T00:00:00Z') TO ('2026-01-11T00:00:00Z')`);
  }
  const [lic] = await sql<{ id: string }[]>`INSERT INTO licenses (public_id, email) VALUES ('lic_9', 'n@x') RETURNING id`;
  const [ws] = await sql<{ id: string }[]>`INSERT INTO workspaces (public_id, license_id, name) VALUES ('ten_9', ${lic!.id}, 'n') RETURNING id`;
  const target = async (name: string) =>
    (await sql<{ id: string }[]>`INSERT INTO targets (public_id, workspace_id, name, url) VALUES (${`tgt_${name}`}, ${ws!.id}, ${name}, 'http://127.0.0.1:9/') RETURNING id`)[0]!.id;
  const a = await target('a');
  const b = await target('b');
  const stream = streamKey('g/t');
  const event = (id: string, at: number, offset: number, targets: string[], runId: string | null = null) => sql`
    INSERT INTO event_log (received_at, workspace_id, log_offset, log_partition, event_id, queue_name, event_type, partition_key, run_id, target_ids)
    VALUES (${new Date(at)}, ${ws!.id}, ${offset}, 1, ${id}, 'orders', 'order.created', 'k1', ${runId}, ${targets}::bigint[])`;
  const delivery = (at: number, offset: number, targetId: string, status: string, attempts: string, updatedAt: number) => sql`
    INSERT INTO delivery_log (received_at, log_offset, target_id, updated_at, log_partition, log_stream, status, attempts)
    VALUES (${new Date(at)}, ${offset}, ${targetId}, ${new Date(updatedAt)}, 1, ${stream}, ${status}, ${attempts})`;
  await event('evt_n1', T, 1, [a, b]);
  await delivery(T, 1, a, 'delivered', '[4,200,3]', T + 7);
  await delivery(T, 1, b, 'failed', '[5,500,2],[1005,null,5000,"timeout, \\"5 s\\""]', T + 2000);
  await event('evt_n2', T + 1000, 2, [a]); // consumed, not attempted yet
  await event('evt_n3', T + 2000, 3, [a], 'run_9');
  await delivery(T + 2000, 3, a, 'delivered', '[3,200,1,null,1]', T + 2003);
  await event('evt_n4', T - 3 * 86_400_000, 0, [a]); // in DEFAULT
  await delivery(T - 3 * 86_400_000, 0, a, 'delivered', '[1,200,1]', T - 3 * 86_400_000 + 1);
  await delivery(T, 99, a, 'pending', '', T); // no event row

  // 090 first; later migrations (100, 110, …) may follow it.
  const applied = await migrate(sql);
  t.equal(applied[0], MIGRATION, '090 is the first migration left to apply');
  t.ok(applied.every((name) => name >= MIGRATION), `and only later ones after it: ${applied.join(', ')}`);

  const parts = await sql<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'event_log'::regclass ORDER BY 1`;
  t.same(parts.map((p) => p.name), ['event_log_default', `event_log_p${DAY}`], 'the same partitions, same names');
  t.equal((await sql`SELECT 1 FROM pg_class WHERE relname LIKE 'old\\_%' OR relname LIKE 'delivery\\_log%'`).length, 0, 'old tables and indexes gone');
  const [counts] = await sql<{ all: number; inDefault: number; streams: number }[]>`
    SELECT count(*)::int AS all, count(*) FILTER (WHERE tableoid = 'event_log_default'::regclass)::int AS "inDefault",
           count(DISTINCT log_stream) FILTER (WHERE log_stream = ${stream})::int AS streams FROM event_log`;
  t.same(counts, { all: 4, inDefault: 1, streams: 1 }, 'every event kept, where it was, with the stream its deliveries had');
  t.equal((await sql`SELECT 1 FROM event_log WHERE log_offset = 99`).length, 0, 'a delivery without its event is not kept');

  const repo = new DeliveryRecordRepo(sql);
  const e1 = await repo.event(ws!.id, 'evt_n1');
  t.same(e1?.deliveries.map((d) => [d.targetName, d.status, d.attempts]), [
    ['a', 'delivered', [{ at: new Date(T + 4).toISOString(), status: 200, durationMs: 3, error: null }]],
    ['b', 'failed', [
      { at: new Date(T + 5).toISOString(), status: 500, durationMs: 2, error: null },
      { at: new Date(T + 1005).toISOString(), status: null, durationMs: 5000, error: 'timeout, "5 s"' },
    ]],
  ], 'GET …/events/{id}: each delivery with its attempts');
  t.equal(e1?.deliveries[1]?.updatedAt?.getTime(), T + 2000, 'update time kept (to the ms)');
  const e2 = await repo.event(ws!.id, 'evt_n2');
  t.same(e2?.deliveries.map((d) => [d.targetName, d.status, d.attempts.length, d.updatedAt]), [['a', 'pending', 0, null]], 'a routed target without a row is pending');
  const run = await repo.runEvents(ws!.id, 'run_9', 10);
  t.same(run.map((e) => e.deliveries[0]?.attempts[0]?.simulated), [true], 'sandbox run with its simulated attempt');
  t.equal((await repo.event(ws!.id, 'evt_n4'))?.deliveries[0]?.status, 'delivered', 'the DEFAULT partition\'s event too');

  const list = new EventListRepo(sql);
  const page = async (f: Record<string, unknown>) => (await list.page({ workspaceId: ws!.id, queueName: 'orders', limit: 10, ...f })).items.map((i) => i.eventId);
  t.same(await page({}), ['evt_n3', 'evt_n2', 'evt_n1', 'evt_n4'], 'the event list, newest first');
  t.same(await page({ status: 'failed' }), ['evt_n1'], 'status=failed');
  t.same(await page({ status: 'pending', targetId: a }), ['evt_n2'], 'status=pending&target=a');
  t.same(await page({ status: 'delivered', targetId: a }), ['evt_n3', 'evt_n1', 'evt_n4'], 'status=delivered&target=a');
  t.same(await page({ targetId: b }), ['evt_n1'], 'target=b');
  const [first] = (await list.page({ workspaceId: ws!.id, queueName: 'orders', limit: 10, status: 'failed' })).items;
  t.same(first?.targets.map((d) => [d.target, d.status, d.attempts, d.lastStatus]), [['a', 'delivered', 1, 200], ['b', 'failed', 2, null]], 'counts and last attempt');

  const jobs = new RedeliveryJobRepo(sql);
  const range = { workspaceId: ws!.id, targetId: b, from: new Date(T - 1000), to: new Date(T + 10_000), cutoff: await jobs.now() };
  t.equal(await jobs.countFailed(range), 1, 'bulk redelivery counts the failed delivery');
  t.same((await jobs.nextFailed(range, null, 10)).map((f) => [f.eventId, f.logPartition, f.logOffset]), [['evt_n1', 1, 1n]]);
  t.equal(await jobs.countFailed({ ...range, cutoff: new Date(T + 1000).toISOString() }), 0, 'not when it failed after the cutoff');

  const check = await repo.replayCheck('g/t', [{ eventId: 'evt_n1', receivedAt: T, offset: 1n }, { eventId: 'evt_n2', receivedAt: T + 1000, offset: 2n }]);
  t.same({ recorded: check.recorded, finished: check.finished.map((f) => f.targetId).sort() }, { recorded: 2, finished: [a, b].sort() }, 'the replay check reads migrated rows');

  // New outcomes merge into migrated rows.
  t.same(await repo.writeBatch([], [{
    eventId: 'evt_n2', targetId: a, status: 'delivered', attempts: [{ at: new Date(T + 1500).toISOString(), status: 200, durationMs: 1, error: null }],
    stream: 'g/t', partition: 1, offset: 2n, receivedAt: T + 1000,
  }]), []);
  t.same((await repo.event(ws!.id, 'evt_n2'))?.deliveries.map((d) => [d.status, d.attempts.length]), [['delivered', 1]]);
  t.same(await migrate(sql), [], 'applied once');
});
