import type { ManagementAuth } from '../../auth/management-auth.js';
import { ServiceError } from '../../errors.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { NodeContext } from '../../node/node-context.js';
import { DeliveryRecordRepo } from '../../storage/delivery-record-repo.js';
import { RedeliveryJobRepo, type RedeliveryJobRow } from '../../storage/redelivery-job-repo.js';
import { RedeliveryRepo } from '../../storage/redelivery-repo.js';
import { redeliver } from './redeliver.js';
import { parseIsoTime } from './event-list-query.js';
import { FieldReader, readJsonObject } from '../json-body.js';
import { RedeliveryJobRunner, STALE_AFTER_MS } from '../../jobs/redelivery-job-runner.js';

/**
 * The widest range one job covers. The event log keeps records for days, not
 * months (retention.hours), so a wider range is a
 * mistake (a year typed for a day) more likely than a plan.
 */
const MAX_RANGE_MS = 31 * 86_400_000;
/** The most deliveries one job hands over; more is a range to narrow, or several jobs. */
const MAX_JOB_DELIVERIES = 100_000;

/**
 * Bulk redelivery (issue 14):
 *
 *   POST /v1/tenants/{tenant}/targets/{name}/redeliveries  { from, to, dryRun? }
 *        dryRun → 200 { count }; otherwise 202 { jobId, status: running, total }
 *   GET  /v1/tenants/{tenant}/redelivery-jobs/{jobId}       the job's progress
 *
 * Covers the target's `failed` deliveries of events received in [from, to),
 * as they stand when the job starts. Each goes through the single-event
 * redelivery path. See RedeliveryJobRunner for where the job runs.
 */
export function registerRedeliveryJobsApi(ctx: NodeContext, auth: ManagementAuth): { drain(): Promise<void> } {
  const jobs = new RedeliveryJobRepo(ctx.sql);
  // The job works on the plain pool: its queries are not bound by a request's deadline.
  const repos = { redeliveries: new RedeliveryRepo(ctx.backgroundSql), log: new DeliveryRecordRepo(ctx.backgroundSql) };
  const runner = new RedeliveryJobRunner(
    new RedeliveryJobRepo(ctx.backgroundSql),
    (orders) => redeliver(ctx, repos, orders),
    ctx.log.child({ component: 'redelivery-jobs' }),
  );
  const opts = { maxBodyBytes: ctx.config.server.maxManagementBodyBytes };

  ctx.router.add('post', '/v1/tenants/:tenant/targets/:name/redeliveries', opts, async (ex) => {
    const { ws } = await auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const target = await ctx.topology.targetByName(ws.id, decodePathSegment(ex.params[1]!));
    if (!target) throw new ServiceError('not_found', 'No such target.');
    const { from, to, dryRun } = readRange(await readJsonObject(ex));
    const range = { workspaceId: ws.id, targetId: target.id, from, to, cutoff: await jobs.now() };
    const count = await jobs.countFailed(range);
    if (dryRun) return void ex.sendJson(200, { count, target: target.name, from: from.toISOString(), to: to.toISOString() });
    if (count > MAX_JOB_DELIVERIES) {
      throw new ServiceError('validation_failed', `The range holds ${count} failed deliveries; one job redelivers at most ${MAX_JOB_DELIVERIES}: narrow from/to.`, [
        { field: 'from', problem: `the range holds more than ${MAX_JOB_DELIVERIES} failed deliveries` },
      ]);
    }
    const job = await jobs.create(range, count, STALE_AFTER_MS);
    if (!job) throw new ServiceError('conflict', `A redelivery job for target ${target.name} is running; poll it, then start another.`);
    runner.start(job);
    ex.sendJson(202, { jobId: job.publicId, status: job.status, total: job.total });
  });

  ctx.router.add('get', '/v1/tenants/:tenant/redelivery-jobs/:jobId', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const job = await jobs.byPublicId(ws.id, decodePathSegment(ex.params[1]!), STALE_AFTER_MS);
    if (!job) throw new ServiceError('not_found', 'No such redelivery job.');
    ex.sendJson(200, jobJson(job));
  });

  return { drain: () => runner.drain() };
}

function readRange(body: Record<string, unknown>): { from: Date; to: Date; dryRun: boolean } {
  const r = new FieldReader(body, ['from', 'to', 'dryRun']);
  const times: Partial<Record<'from' | 'to', Date>> = {};
  for (const field of ['from', 'to'] as const) {
    const v = r.string(field, { required: true, max: 40 });
    if (v === undefined) continue;
    const at = parseIsoTime(v);
    if (at === null) r.problem(field, 'must be an ISO-8601 time such as 2026-01-31T12:00:00Z');
    else times[field] = at;
  }
  const dryRun = r.boolean('dryRun') ?? false;
  const { from, to } = times;
  if (from && to) {
    if (from.getTime() >= to.getTime()) r.problem('to', 'must be later than from');
    else if (to.getTime() - from.getTime() > MAX_RANGE_MS) r.problem('to', `must be at most ${MAX_RANGE_MS / 86_400_000} days after from`);
    if (from.getTime() > Date.now()) r.problem('from', 'is in the future: no event was received then');
  }
  r.done();
  return { from: from!, to: to!, dryRun };
}

function jobJson(job: RedeliveryJobRow) {
  return {
    jobId: job.publicId,
    status: job.status,
    total: job.total,
    done: job.done,
    failed: job.failed,
    from: job.from.toISOString(),
    to: job.to.toISOString(),
    error: job.error,
    createdAt: job.createdAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
  };
}
