import type { ManagementAuth } from '../../auth/management-auth.js';
import { ServiceError } from '../../errors.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { NodeContext } from '../../node/node-context.js';
import { DeliveryRecordRepo } from '../../storage/delivery-record-repo.js';
import { RedeliveryJobRepo, type RedeliveryJobRow } from '../../storage/redelivery-job-repo.js';
import { RedeliveryRepo } from '../../storage/redelivery-repo.js';
import { redeliver } from './redeliver.js';
import { parseIsoTime } from './event-list-query.js';
import Type, { type Static } from 'typebox';
import { compileBody, registerFormat } from '../../schema/body-validator.js';
import { closed, maybe, withProblem } from '../../schema/schema-kit.js';
import { Problems, readBody } from '../json-body.js';
import { RedeliveryJobRunner, STALE_AFTER_MS, type JobEnd } from '../../jobs/redelivery-job-runner.js';
import { JOB_ACTOR, actorOf, type ActivityKind } from '../../activity/activity-kinds.js';
import { ActivityRepo } from '../../storage/activity-repo.js';
import { MissedDeliveryRepo } from '../../storage/missed-delivery-repo.js';
import type { RedeliveryDryRunView, RedeliveryJobStartedView, RedeliveryJobView } from './event-views.js';
import { withinMs } from '../../util/within-ms.js';

/**
 * The widest range one job covers. The event log keeps records for days, not
 * months (retention.hours), so a wider range is a
 * mistake (a year typed for a day) more likely than a plan.
 */
const MAX_RANGE_MS = 31 * 86_400_000;
/** How long a cancel's answer waits for this node's job to finish the batch it is handing over. */
const CANCEL_WAIT_MS = 5_000;
/** The most deliveries one job hands over; more is a range to narrow, or several jobs. */
const MAX_JOB_DELIVERIES = 100_000;

registerFormat('iso-time', (v) => parseIsoTime(v) !== null);
const isoTime = () => withProblem(Type.String({ maxLength: 40, format: 'iso-time' }), 'must be an ISO-8601 time such as 2026-01-31T12:00:00Z');

/** The body of `POST /v1/tenants/{tenant}/targets/{name}/redeliveries`: the failed deliveries of events received in [from, to). */
export const RedeliveryJobInput = closed(
  { from: isoTime(), to: isoTime(), dryRun: maybe(Type.Boolean({ description: 'count only: how many deliveries the job would send' })) },
  { title: 'RedeliveryJobInput', description: 'The failed deliveries of events received from `from` (inclusive) to `to` (exclusive), at most 31 days.' },
);
const checkRedeliveryJobInput = compileBody(RedeliveryJobInput);

/** The body of `POST /v1/tenants/{tenant}/targets/{name}/replay`: every delivery the target did not acknowledge, of events received since `since`. */
export const ReplayInput = closed(
  { since: isoTime(), dryRun: maybe(Type.Boolean({ description: 'count only: how many deliveries the replay would send' })) },
  { title: 'ReplayInput', description: 'Replays what the target missed: its failed and blocked deliveries of events received from `since` (at most 31 days ago) until now.' },
);
const checkReplayInput = compileBody(ReplayInput);

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
  const missed = new MissedDeliveryRepo(ctx.sql);
  const activity = new ActivityRepo(ctx.sql);
  // The job works on the plain pool: its queries are not bound by a request's deadline.
  const repos = { redeliveries: new RedeliveryRepo(ctx.backgroundSql), log: new DeliveryRecordRepo(ctx.backgroundSql) };
  const backgroundActivity = new ActivityRepo(ctx.backgroundSql);
  const runner = new RedeliveryJobRunner(
    new RedeliveryJobRepo(ctx.backgroundSql),
    (orders) => redeliver(ctx, repos, orders),
    ctx.log.child({ component: 'redelivery-jobs' }),
    new MissedDeliveryRepo(ctx.backgroundSql),
    (job, end) => backgroundActivity.record(job.workspaceId, {
      kind: job.kind === 'replay' ? 'replay.finished' : 'redelivery.finished',
      actor: JOB_ACTOR,
      subject: job.publicId,
      detail: endDetail(end),
    }),
  );
  const opts = { maxBodyBytes: ctx.config.server.maxManagementBodyBytes };

  ctx.router.add('post', '/v1/tenants/:tenant/targets/:name/redeliveries', { ...opts, body: checkRedeliveryJobInput }, async (ex) => {
    const { ws, caller } = await auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const target = await ctx.topology.targetByName(ws.id, decodePathSegment(ex.params[1]!));
    if (!target) throw new ServiceError('not_found', 'No such target.');
    const { from, to, dryRun } = rangeOf(await readBody(ex, checkRedeliveryJobInput));
    const range = { workspaceId: ws.id, targetId: target.id, from, to, cutoff: await jobs.now() };
    const count = await jobs.countFailed(range);
    if (dryRun) {
      const answer: Static<typeof RedeliveryDryRunView> = { count, target: target.name, from: from.toISOString(), to: to.toISOString() };
      return void ex.sendJson(200, answer);
    }
    if (count > MAX_JOB_DELIVERIES) {
      throw new ServiceError('validation_failed', `The range holds ${count} failed deliveries; one job redelivers at most ${MAX_JOB_DELIVERIES}: narrow from/to.`, [
        { field: 'from', problem: `the range holds more than ${MAX_JOB_DELIVERIES} failed deliveries` },
      ]);
    }
    const job = await jobs.create(range, count, STALE_AFTER_MS);
    if (!job) throw new ServiceError('conflict', `A redelivery job for target ${target.name} is running; poll it, then start another.`);
    await started('redelivery.started', ws.id, actorOf(caller), job.publicId, `target ${target.name}: ${count} failed deliveries`);
    runner.start(job);
    // jobs.create inserts the job running (runner.start does not change the row it is given).
    const answer: Static<typeof RedeliveryJobStartedView> = { jobId: job.publicId, status: 'running', total: job.total };
    ex.sendJson(202, answer);
  });

  ctx.router.add('get', '/v1/tenants/:tenant/redelivery-jobs/:jobId', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const job = await jobs.byPublicId(ws.id, decodePathSegment(ex.params[1]!), STALE_AFTER_MS);
    if (!job) throw new ServiceError('not_found', 'No such redelivery job.');
    ex.sendJson(200, jobJson(job));
  });

  // Replay (issue 26): every delivery the target did not acknowledge since a time, each key's in order.
  ctx.router.add('post', '/v1/tenants/:tenant/targets/:name/replay', { ...opts, body: checkReplayInput }, async (ex) => {
    const { ws, caller } = await auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const target = await ctx.topology.targetByName(ws.id, decodePathSegment(ex.params[1]!));
    if (!target) throw new ServiceError('not_found', 'No such target.');
    const body = await readBody(ex, checkReplayInput);
    const since = parseIsoTime(body.since)!;
    const problems = new Problems();
    if (since.getTime() > Date.now()) problems.add('since', 'is in the future: no event was received then');
    else if (Date.now() - since.getTime() > MAX_RANGE_MS) problems.add('since', `must be at most ${MAX_RANGE_MS / 86_400_000} days ago`);
    problems.throwIfAny();
    const cutoff = await jobs.now();
    const range = { workspaceId: ws.id, targetId: target.id, since, cutoff };
    const count = await missed.count(range);
    if (body.dryRun) {
      const answer: Static<typeof RedeliveryDryRunView> = { count, target: target.name, from: since.toISOString(), to: new Date(cutoff).toISOString() };
      return void ex.sendJson(200, answer);
    }
    if (count > MAX_JOB_DELIVERIES) {
      throw new ServiceError('validation_failed', `The target missed ${count} deliveries since then; one job redelivers at most ${MAX_JOB_DELIVERIES}: start later.`, [
        { field: 'since', problem: `more than ${MAX_JOB_DELIVERIES} deliveries were missed since then` },
      ]);
    }
    const job = await jobs.create({ workspaceId: ws.id, targetId: target.id, from: since, to: new Date(cutoff), cutoff }, count, STALE_AFTER_MS, 'replay');
    if (!job) throw new ServiceError('conflict', `A redelivery job for target ${target.name} is running; poll it, then start another.`);
    await started('replay.started', ws.id, actorOf(caller), job.publicId, `target ${target.name}: ${count} missed deliveries since ${since.toISOString()}`);
    runner.start(job);
    const answer: Static<typeof RedeliveryJobStartedView> = { jobId: job.publicId, status: 'running', total: job.total };
    ex.sendJson(202, answer);
  });

  // Cancel: the job stops before its next batch (on whichever node runs it); what it handed over stays handed over.
  // On the node that runs it, the answer waits (a few seconds at most) for a batch being handed over, so its
  // counts are final; the feed names who cancelled (replay.cancelled), then the job's end (replay.finished).
  ctx.router.add('post', '/v1/tenants/:tenant/redelivery-jobs/:jobId/cancel', { maxBodyBytes: 0 }, async (ex) => {
    const { ws, caller } = await auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const publicId = decodePathSegment(ex.params[1]!);
    const cancel = await jobs.cancel(ws.id, publicId);
    if (!cancel) throw new ServiceError('not_found', 'No such redelivery job.');
    let job = cancel.job;
    if (cancel.cancelledNow) {
      await activity.record(ws.id, {
        kind: job.kind === 'replay' ? 'replay.cancelled' : 'redelivery.cancelled',
        actor: actorOf(caller),
        subject: job.publicId,
        detail: 'stops before its next batch; what it handed over is delivered',
      });
      const waited = await withinMs(runner.cancel(job.id), CANCEL_WAIT_MS).then(() => true, () => false);
      if (waited) job = (await jobs.byPublicId(ws.id, publicId, STALE_AFTER_MS)) ?? job;
    }
    ex.sendJson(200, jobJson(job));
  });

  const started = (kind: ActivityKind, workspaceId: string, actor: string, jobId: string, detail: string) =>
    activity.record(workspaceId, { kind, actor, subject: jobId, detail });

  return { drain: () => runner.drain() };
}

/** A finished job in the activity feed's words. */
function endDetail(end: JobEnd): string {
  const gone = end.gone > 0 ? `, ${end.gone} no longer in the event log` : '';
  return `${end.status}: ${end.handedOver} handed to delivery again${gone}`;
}

/** The range a valid body asks for, once it is a range worth a job. */
function rangeOf(body: { from: string; to: string; dryRun?: boolean | null }): { from: Date; to: Date; dryRun: boolean } {
  const from = parseIsoTime(body.from)!;
  const to = parseIsoTime(body.to)!;
  const problems = new Problems();
  if (from.getTime() >= to.getTime()) problems.add('to', 'must be later than from');
  else if (to.getTime() - from.getTime() > MAX_RANGE_MS) problems.add('to', `must be at most ${MAX_RANGE_MS / 86_400_000} days after from`);
  if (from.getTime() > Date.now()) problems.add('from', 'is in the future: no event was received then');
  problems.throwIfAny();
  return { from, to, dryRun: body.dryRun ?? false };
}

function jobJson(job: RedeliveryJobRow): Static<typeof RedeliveryJobView> {
  return {
    jobId: job.publicId,
    kind: job.kind,
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
