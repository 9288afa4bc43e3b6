import t, { type Test } from 'tap';
import { connectDatabase } from '../../../src/storage/db.js';
import { migrate } from '../../../src/storage/migrate.js';
import { RetentionSweep } from '../../../src/jobs/retention-sweep.js';
import { RetentionRepo } from '../../../src/storage/retention-repo.js';
import { createLogger } from '../../../src/observability/logger.js';
import { ROLLUP_TABLES, RollupRepo } from '../../../src/stats/rollup-repo.js';
import { Rollup, rowsOf } from '../../../src/stats/rollup.js';
import { latencyBucket } from '../../../src/stats/latency-buckets.js';
import { freshDatabase } from '../../helpers/backends.js';

/** The rollup tables against a real Postgres: upserts that add up, sums per step, retention. */
const H = 3_600_000;

async function fresh(t: Test) {
  const sql = connectDatabase(await freshDatabase(t), 4);
  t.teardown(() => sql.end());
  await migrate(sql);
  const [lic] = await sql<{ id: string }[]>`INSERT INTO licenses (public_id, email) VALUES ('lic_s', 's@x') RETURNING id`;
  const ws = async (name: string, hours: number | null) =>
    (await sql<{ id: string }[]>`INSERT INTO workspaces (public_id, license_id, name, retention_hours) VALUES (${`ten_${name}`}, ${lic!.id}, ${name}, ${hours}) RETURNING id`)[0]!.id;
  const repo = new RollupRepo(sql);
  const add = async (fill: (r: Rollup) => void) => {
    const r = new Rollup();
    fill(r);
    const cells = r.take();
    await repo.add(ROLLUP_TABLES.map(([, seconds]) => rowsOf(cells, seconds)));
  };
  return { sql, repo, ws, add };
}

t.test('flushes add to the stored rows, histograms element by element', async (t) => {
  const { repo, ws, add } = await fresh(t);
  const w = await ws('a', null);
  const at = Date.parse('2030-01-01T10:00:10Z');
  await add((r) => {
    r.accepted('ten_a', 'q', at);
    r.attempt('ten_a', 'q', at, 'delivered', '2xx', 3);
    r.accepted('ten_nosuch', 'q', at); // a workspace deleted meanwhile: left out, not an error
  });
  await add((r) => {
    r.accepted('ten_a', 'q', at + 1000);
    r.attempt('ten_a', 'q', at + 1000, 'delivered', '2xx', 3000);
    r.attempt('ten_a', 'q', at + 1000, 'retry', 'timeout', null);
  });
  await add(() => {});
  const minutes = await repo.rows('stats_minute', w, at / 1000 - 60, at / 1000 + 60, null);
  t.equal(minutes.length, 1, 'one row: the second flush added to it');
  t.match(minutes[0], { queue: 'q', at: Date.parse('2030-01-01T10:00:00Z') / 1000 });
  t.same(minutes[0]!.counts, [2, 2, 1, 0, 2, 0, 0, 0, 1, 0]);
  const expected = new Array<number>(latencyBucket(3000) + 1).fill(0);
  expected[latencyBucket(3)] = 1;
  expected[latencyBucket(3000)] = 1;
  t.same(minutes[0]!.latency, expected, 'both latencies, in their buckets, the histograms added element by element');
  for (const table of ['stats_ten_minutes', 'stats_hour'] as const) {
    const [row] = await repo.rows(table, w, at / 1000 - 3600, at / 1000 + 3600, 'q');
    t.same([row!.counts, row!.latency], [minutes[0]!.counts, expected], `${table} holds the same`);
  }
  t.same(await repo.rows('stats_hour', w, at / 1000 - 3600, at / 1000 + 3600, 'other'), [], 'another queue: nothing');
});

t.test('the retention sweep deletes rollups past retention, and past a workspace\'s shorter one', async (t) => {
  const { sql, ws, add } = await fresh(t);
  await ws('long', null);
  await ws('short', 2);
  const now = Date.parse('2030-01-10T12:00:00Z');
  await add((r) => {
    for (const tenant of ['ten_long', 'ten_short']) {
      for (const ageH of [30, 5, 1]) r.accepted(tenant, 'q', now - ageH * H);
    }
  });
  const sweep = new RetentionSweep(new RetentionRepo(sql), { retentionMs: 24 * H, sweepIntervalMs: 60_000, deleteBatchRows: 1 }, createLogger('silent'), () => now);
  await sweep.sweep();
  const left = async (table: string) => (await sql<{ t: string; age: number }[]>`
    SELECT w.public_id AS t, round(extract(epoch FROM (${new Date(now)}::timestamptz - s.at)) / 3600)::int AS age
    FROM ${sql(table)} s JOIN workspaces w ON w.id = s.workspace_id ORDER BY 1, 2`).map((r) => `${r.t}:${r.age}`);
  t.same(await left('stats_minute'), ['ten_long:1', 'ten_long:5', 'ten_short:1'], 'past 24 h gone; past 2 h gone for the short one');
  t.same(await left('stats_ten_minutes'), ['ten_long:1', 'ten_long:5', 'ten_short:1']);
  t.same(await left('stats_hour'), ['ten_long:1', 'ten_long:5', 'ten_short:1']);
});
