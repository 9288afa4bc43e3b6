import type { AttemptReport, Deliverer } from './deliverer.js';
import { PermitWithdrawn } from './flow/target-flows.js';
import type { FailureStreaks } from './failure-streaks.js';
import type { DeliveryRecords } from './delivery-records.js';
import { isoAt } from './iso-time.js';
import { dispatchFailure } from './dispatch-failure.js';
import { compressed, nextAttemptAt } from './retry-schedule.js';
import { attemptChannel, targetDisabledChannel, type AttemptMessage } from '../observability/channels.js';
import type { Logger } from '../observability/logger.js';
import type { RouteTable, RouteTarget } from '../routing/route-table.js';
import type { AttemptEntry, DeliveryStatus } from '../storage/delivery-record-repo.js';
import type { Job } from './job.js';

/**
 * After one step a job is over (delivered, failed, blocked), due again at
 * `dueAt`, or `withdrawn`: it gave up its wait for the target's flow permit
 * before anything was sent (the lane is spilling to parking), so no attempt counts.
 */
export type StepResult = { kind: 'done'; status: DeliveryStatus } | { kind: 'retry'; dueAt: number } | { kind: 'withdrawn' };

export interface StepDeps {
  /** '<consumer group>/<topic>' (see src/delivery/delivery-stream.ts). */
  stream: string;
  routes: RouteTable;
  deliverer: Deliverer;
  deliveryRecords: DeliveryRecords;
  /** Disables a target that answered 410, with the reason its workspace sees. */
  disableTarget(target: RouteTarget, reason: string): Promise<void>;
  sandboxSpeedup: number;
  /** Failure streaks per target (docs/delivery.md#delivery-engine: disabled after failing continuously). */
  streaks: FailureStreaks;
  log: Logger;
  now?: () => number;
}

/**
 * One attempt of a job and what follows from it (docs/delivery.md#delivery-engine), shared by
 * lanes running in memory and lanes drained from parking:
 *
 *   current target config ──► attempt ──► log + channel ──► delivered | failed | retry at T
 *
 * The target is looked up afresh before every attempt, so a retry uses the
 * configuration saved since, and a target that was disabled or is no longer
 * routed gets `blocked` instead of a request.
 */
export class DeliveryStep {
  private readonly now: () => number;
  /** Targets this process disabled, and when: jobs routed before then must look again. */
  private readonly disabledAt = new Map<string, number>();

  private readonly deps: StepDeps;
  constructor(deps: StepDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  /**
   * Throws only when `signal` aborts while the route lookup waits for the
   * database. `withdraw` aborting while the attempt waits for its flow permit
   * ends the step `withdrawn`.
   */
  async run(job: Job, partition: number, signal: AbortSignal, withdraw?: AbortSignal): Promise<StepResult> {
    const { record } = job;
    // A job fresh from routing has its target, unless this process disabled
    // that target since; a job that waited looks it up again.
    const fresh = job.attempts === 0 && job.routed !== null && !((this.disabledAt.get(job.targetId) ?? -1) >= job.routedAt);
    const target = fresh ? job.routed : await this.currentTarget(job, signal);
    job.routed = null;
    if (!target || target.disabled) {
      this.deps.deliveryRecords.delivery({ eventId: record.id, targetId: job.targetId, stream: this.deps.stream, partition, offset: job.seq, receivedAt: record.receivedAt, status: 'blocked' });
      return { kind: 'done', status: 'blocked' };
    }

    let report: AttemptReport;
    try {
      report = await this.deps.deliverer.attempt(record, target, job.attempts + 1, withdraw);
    } catch (err) {
      if (err instanceof PermitWithdrawn) return { kind: 'withdrawn' };
      throw err;
    }
    job.attempts++;
    job.firstAttemptAt ??= report.at;
    const { result, outcome } = report;
    const status = result.kind === 'response' ? result.status : null;
    let error = outcome.kind === 'delivered' ? null : outcome.reason;

    let verdict: StepResult;
    if (outcome.kind === 'delivered') verdict = { kind: 'done', status: 'delivered' };
    else if (outcome.kind === 'failed') verdict = { kind: 'done', status: 'failed' };
    else {
      job.lastError = outcome.reason;
      let policy = this.deps.deliverer.policyOf(target);
      if (record.sandbox) policy = compressed(policy, this.deps.sandboxSpeedup);
      const dueAt = nextAttemptAt(policy, job.attempts, job.firstAttemptAt, this.now(), outcome.retryAfterMs);
      if (dueAt !== null) verdict = { kind: 'retry', dueAt };
      else {
        // Dead letter: `failed` until someone redelivers it.
        error = `${outcome.reason}; no retry left within the ${Math.round(policy.horizonSeconds)} s horizon`;
        verdict = { kind: 'done', status: 'failed' };
      }
    }

    // Simulated attempts stay out of the channel and off the real target: nothing was distributed.
    if (!report.simulated) {
      if (attemptChannel.hasSubscribers) {
        const message: AttemptMessage = {
          record,
          target,
          eventId: record.id,
          targetPublicId: target.publicId,
          attempt: job.attempts,
          // What became of the delivery: a dead-lettered retry counts as failed.
          outcome: verdict.kind === 'retry' ? 'retry' : verdict.status === 'delivered' ? 'delivered' : 'failed',
          status,
          errorCode: result.kind === 'error' ? result.code : null,
          failureKind: result.kind === 'error' ? dispatchFailure(result.code).kind : null,
          reason: error,
          durationMs: result.durationMs,
        };
        attemptChannel.publish(message);
      }
      if (outcome.kind === 'delivered') this.streakEnded(target);
      else await this.streakGoesOn(target);
      if (outcome.kind === 'failed' && outcome.disableTarget) {
        await this.disable(target, `the receiver answered 410 Gone to event ${record.id} at ${new Date(report.at).toISOString()}`);
      }
    }
    const entry: AttemptEntry = { at: isoAt(report.at), status, durationMs: result.durationMs, error };
    if (report.simulated) entry.simulated = true;
    // Spelled out rather than spread from a shared base: this runs once per attempt.
    this.deps.deliveryRecords.delivery({
      eventId: record.id,
      targetId: job.targetId,
      stream: this.deps.stream,
      partition,
      offset: job.seq,
      receivedAt: record.receivedAt,
      status: verdict.kind === 'retry' ? 'retrying' : verdict.status,
      attempt: entry,
    });
    return verdict;
  }

  private async disable(target: RouteTarget, reason: string): Promise<void> {
    this.disabledAt.set(target.id, this.now());
    if (targetDisabledChannel.hasSubscribers) targetDisabledChannel.publish(target.publicId);
    await this.deps.disableTarget(target, reason).catch((err: unknown) => {
      this.deps.log.warn({ err, target: target.publicId }, 'could not disable target');
    });
  }

  /** A success ends the target's failure streak (written at most once a minute per target, off the hot path). */
  private streakEnded(target: RouteTarget): void {
    const written = this.deps.streaks.succeeded(target.id);
    written?.catch((err: unknown) => this.deps.log.warn({ err, target: target.publicId }, 'could not record a healthy target'));
  }

  /** A failure extends the streak; one long enough disables the target (docs/delivery.md#delivery-engine). */
  private async streakGoesOn(target: RouteTarget): Promise<void> {
    try {
      if (await this.deps.streaks.failed(target.id)) {
        const since = new Date(this.deps.streaks.since(target.id) ?? this.now()).toISOString();
        await this.disable(target, `every delivery attempt has failed since ${since}`);
        this.deps.streaks.forget(target.id);
      }
    } catch (err) {
      this.deps.log.warn({ err, target: target.publicId }, 'could not track the target\'s failures');
    }
  }

  private async currentTarget(job: Job, signal: AbortSignal): Promise<RouteTarget | null> {
    for (;;) {
      signal.throwIfAborted();
      try {
        const targets = await this.deps.routes.targetsFor(job.record);
        return targets.find((t) => t.id === job.targetId) ?? null;
      } catch (err) {
        // The database is unreachable: the job keeps its place and waits.
        this.deps.log.warn({ err, eventId: job.record.id }, 'route lookup failed, will retry');
        await new Promise((r) => setTimeout(r, 500).unref());
      }
    }
  }
}
