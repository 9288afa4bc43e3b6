import t, { type Test } from 'tap';
import { connectDatabase } from '../../../src/storage/db.js';
import { migrate } from '../../../src/storage/migrate.js';
import { RetentionRepo } from '../../../src/storage/retention-repo.js';
import { ensurePartitionsAtStart, RetentionSweep } from '../../../src/jobs/retention-sweep.js';
import { createLogger } from '../../../src/observability/logger.js';
import { freshDatabase } from '../../helpers/backends.js';

/**
 * The sweep's statements against a real Postgres, with a clock of the test's
 * choosing: partitions made and dropped, rows that arrived before their
 * partition, a table lock that is not granted, and a workspace that keeps less.
 */
const H = 3_600_000;

/** A migrated database of the test's own, a workspace maker and an event writer. */
async function fresh(t: Test) {
  const sql = connectDatabase(await freshDatabase(t), 4);
  t.teardown(() => sql.end());
  await migrate(sql);
  const [lic] = await sql<{ id: string }[]>`INSERT INTO licenses (public_id, email) VALUES ('lic_r', 'r@x') RETURNING id`;
  const ws = async (name: string, hours: number | null) =>
    (await sql<{ id: string }[]>`INSERT INTO workspaces (public_id, license_id, name, retention_hours) VALUES (${`ten_${name}`}, ${lic!.id}, ${name}, ${hours}) RETURNING id`)[0]!.id;
  const event = (workspaceId: string, id: string, at: number) => sql`
    INSERT INTO event_log (event_id, workspace_id, queue_name, received_at, log_partition, log_offset, log_stream, deliveries)
    VALUES (${id}, ${workspaceId}, 'q', ${new Date(at)}, 0, ${at % 1_000_000}, 1, '1:d:3:[2,200,1]')`;
  const where = async (id: string) =>
    (await sql<{ part: string }[]>`SELECT tableoid::regclass::text AS part FROM event_log WHERE event_id = ${id}`)[0]?.part ?? null;
  return { sql, repo: new RetentionRepo(sql), ws, event, where };
}

t.test('rows that arrived before their partition move into it when it is made', async (t) => {
  const { repo, ws, event, where } = await fresh(t);
  const w = await ws('early', null);
  const now = Date.parse('2030-01-01T10:30:00Z');
  await event(w, 'evt_early', now + 2 * H);
  t.equal(await where('evt_early'), 'event_log_default');
  const made = await repo.ensurePartitions(now, H, 3 * H, 5_000);
  t.ok(made.includes('event_log_p20300101t120000_20300101t130000'), made.join(', '));
  t.equal(await where('evt_early'), 'event_log_p20300101t120000_20300101t130000', 'moved out of DEFAULT');
  t.same(await repo.ensurePartitions(now, H, 3 * H, 5_000), [], 'made once');
});

t.test('a server without autovacuum is named at the sweep\'s start, one with it is not', async (t) => {
  const { sql, repo } = await fresh(t);
  const [{ setting }] = await sql<{ setting: string }[]>`SELECT current_setting('autovacuum') AS setting`;
  const warnings: string[] = [];
  const log = createLogger('silent');
  log.warn = ((msg: string) => void warnings.push(msg)) as unknown as typeof log.warn;
  const sweep = new RetentionSweep(repo, { retentionMs: H, sweepIntervalMs: 60_000, deleteBatchRows: 100 }, log);
  t.equal(await sweep.checkVacuum(), setting === 'on', `the server says autovacuum = ${setting}`);
  if (setting === 'on') t.same(warnings, [], 'nothing to say');
  else t.match(warnings, [/autovacuum is off on this Postgres server.*not reclaimed/], 'the operator is told what grows and why');
});

t.test('a table lock not granted in time does not fail a start', async (t) => {
  const { sql, repo } = await fresh(t);
  const holder = await sql.reserve();
  await holder`BEGIN`;
  await holder`SELECT count(*) FROM event_log`; // ACCESS SHARE until the end of the transaction
  const warnings: string[] = [];
  const log = createLogger('silent');
  log.warn = ((_o: unknown, msg: string) => void warnings.push(msg)) as unknown as typeof log.warn;
  const started = Date.now();
  // Retention 1 h: 5-minute partitions from now on, none of which exists yet.
  await ensurePartitionsAtStart(repo, { retentionMs: H, sweepIntervalMs: 60_000, deleteBatchRows: 100 }, log);
  t.ok(Date.now() - started >= 4_000, 'it waited for lock_timeout');
  t.match(warnings, [/not created at start/]);
  await holder`ROLLBACK`;
  holder.release();
});

t.test('a sweep drops partitions past retention and deletes what a shorter workspace retention leaves', async (t) => {
  const { sql, repo, ws, event, where } = await fresh(t);
  const short = await ws('short', 0.5);
  const normal = await ws('normal', null);
  const t0 = Date.parse('2031-06-01T00:00:00Z');
  const options = { retentionMs: 2 * H, sweepIntervalMs: 60_000, deleteBatchRows: 2 };
  // Retention 2 h: 10-minute partitions.
  await repo.ensurePartitions(t0, 600_000, 3 * H, 5_000);
  for (let i = 0; i < 5; i++) {
    await event(short, `evt_s${i}`, t0 + i * 60_000);
    await event(normal, `evt_n${i}`, t0 + i * 60_000);
  }
  let clock = t0 + 45 * 60_000;
  const sweep = new RetentionSweep(repo, options, createLogger('silent'), () => clock);
  let result = await sweep.sweep();
  const [left] = await sql<{ s: number; n: number }[]>`
    SELECT count(*) FILTER (WHERE workspace_id = ${short})::int AS s, count(*) FILTER (WHERE workspace_id = ${normal})::int AS n FROM event_log`;
  t.same(left, { s: 0, n: 5 }, '45 min later: the 30-minute workspace has nothing left, the other all');
  t.equal(result.deleted, 5, 'in batches of 2 rows');
  t.same(result.dropped, [], 'no partition past 2 h yet');
  clock = t0 + 3 * H + 10 * 60_000;
  result = await sweep.sweep();
  t.ok(result.dropped.includes('event_log_p20310601t000000_20310601t001000'), 'the first 10 minutes dropped past 2 h 10 min');
  t.equal(await where('evt_n0'), null);
  t.ok(result.created.length > 0, 'and partitions made ahead of the new now');
  const figures = await repo.figures();
  t.same(figures.map((f) => f.table).sort(), ['event_log', 'parked_deliveries', 'redelivery_jobs', 'redelivery_requests', 'stats_hour', 'stats_minute', 'stats_ten_minutes']);
  t.ok(figures.every((f) => f.bytes > 0), 'bytes of every table');
});
