import t from 'tap';
import { connectDatabase } from '../../../src/storage/db.js';
import { migrate } from '../../../src/storage/migrate.js';
import { RetentionRepo } from '../../../src/storage/retention-repo.js';
import { RetentionSweep } from '../../../src/jobs/retention-sweep.js';
import { createLogger } from '../../../src/observability/logger.js';
import { freshDatabase } from '../../helpers/backends.js';

/**
 * Issue 26's small tables under the retention sweep: activity entries go at
 * retention.hours (sooner for a workspace that keeps less), target-health
 * counter buckets at 7 days (the widest health window), whatever the retention.
 */
const H = 3_600_000;

t.test('the sweep deletes activity past retention (a workspace\'s own shorter one too) and health buckets past 7 days', async (t) => {
  const sql = connectDatabase(await freshDatabase(t), 2);
  t.teardown(() => sql.end());
  await migrate(sql);
  const [lic] = await sql<{ id: string }[]>`INSERT INTO licenses (public_id, email) VALUES ('lic_a', 'a@x') RETURNING id`;
  const ws = async (name: string, hours: number | null) =>
    (await sql<{ id: string }[]>`INSERT INTO workspaces (public_id, license_id, name, retention_hours) VALUES (${`ten_${name}`}, ${lic!.id}, ${name}, ${hours}) RETURNING id`)[0]!.id;
  const normal = await ws('normal', null);
  const short = await ws('short', 1);
  const now = Date.UTC(2026, 10, 27, 12);
  const entry = (workspaceId: string, hoursAgo: number) =>
    sql`INSERT INTO activity (workspace_id, at, kind, actor, subject) VALUES (${workspaceId}, ${new Date(now - hoursAgo * H)}, 'key.created', 'key:k', ${`${hoursAgo}h`})`;
  for (const h of [0.5, 2, 30, 80]) {
    await entry(normal, h);
    await entry(short, h);
  }
  const [target] = await sql<{ id: string }[]>`
    INSERT INTO targets (public_id, workspace_id, name, url) VALUES ('tgt_a', ${normal}, 'a', 'http://x/') RETURNING id`;
  for (const days of [1, 6, 8, 10]) {
    await sql`INSERT INTO target_health_buckets (target_id, bucket_at, attempts) VALUES (${target!.id}, ${new Date(now - days * 24 * H)}, 1)`;
  }

  const sweep = new RetentionSweep(new RetentionRepo(sql), { retentionMs: 72 * H, sweepIntervalMs: 60_000, deleteBatchRows: 2 }, createLogger('silent'), () => now);
  await sweep.sweep();
  const kept = await sql<{ ws: string; subject: string }[]>`SELECT workspace_id::text AS ws, subject FROM activity ORDER BY workspace_id, at DESC`;
  t.same(kept.filter((r) => r.ws === normal).map((r) => r.subject), ['0.5h', '2h', '30h'], 'the 72 h retention: the 80 h old entry went');
  t.same(kept.filter((r) => r.ws === short).map((r) => r.subject), ['0.5h'], 'a workspace keeping 1 h keeps 1 h of activity');
  const buckets = await sql<{ days: number }[]>`
    SELECT round(extract(epoch FROM (${new Date(now)}::timestamptz - bucket_at)) / 86400)::int AS days FROM target_health_buckets ORDER BY bucket_at DESC`;
  t.same(buckets.map((b) => b.days), [1, 6], 'buckets older than 7 days went, even past the 72 h retention');
});
