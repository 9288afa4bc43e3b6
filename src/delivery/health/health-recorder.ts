import { DELIVERY_ACTOR } from '../../activity/activity-kinds.js';
import { attemptChannel, type AttemptMessage } from '../../observability/channels.js';
import type { Logger } from '../../observability/logger.js';
import type { ActivityRepo } from '../../storage/activity-repo.js';
import type { TargetHealthRepo } from '../../storage/target-health-repo.js';
import { dueForWarning, type HealthThresholds } from './health-state.js';
import { HealthTally } from './health-tally.js';

/**
 * Target health on a delivery node (docs/delivery.md#target-health):
 *
 *   attempt channel ──► HealthTally (memory: a map lookup and a few adds per attempt)
 *                            │ every healthFlushMs, one transaction
 *                            ▼
 *        target_health_buckets (5-minute counts) + target_health (failures in a row, last error)
 *                            │ a target failing past warnAfterFailingSeconds
 *                            ▼
 *        target_health.warned_for (once per streak, cluster-wide) ──► activity: target.warned
 *
 * Subscribed to the attempt channel rather than called by the delivery step,
 * so the data path carries no health code; simulated (sandbox) attempts are
 * never published there.
 */
export class HealthRecorder {
  private readonly tally = new HealthTally();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly listener = (message: unknown) => this.onAttempt(message as AttemptMessage);

  private readonly repo: TargetHealthRepo;
  private readonly activity: ActivityRepo;
  private readonly streakSince: (targetId: string) => number | null;
  private readonly thresholds: HealthThresholds;
  private readonly flushMs: number;
  private readonly log: Logger;
  private readonly now: () => number;
  constructor(
    repo: TargetHealthRepo,
    activity: ActivityRepo,
    /** The streak start this node last read for a target (FailureStreaks.since). */
    streakSince: (targetId: string) => number | null,
    thresholds: HealthThresholds,
    flushMs: number,
    log: Logger,
    now: () => number = Date.now,
  ) {
    this.repo = repo;
    this.activity = activity;
    this.streakSince = streakSince;
    this.thresholds = thresholds;
    this.flushMs = flushMs;
    this.log = log;
    this.now = now;
  }

  start(): void {
    attemptChannel.subscribe(this.listener);
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    attemptChannel.unsubscribe(this.listener);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  onAttempt(m: AttemptMessage): void {
    this.tally.add(m.target.id, m.outcome === 'delivered', m.durationMs, m.outcome === 'delivered' ? null : m.reason, this.now());
  }

  /** Writes what was counted; a failed write is logged and its counts dropped (health is advisory). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = this.write().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.tally.size === 0) return;
    const { buckets, targets } = this.tally.take();
    const streaks = new Map<string, number>();
    for (const t of targets) {
      const since = t.tailFailures > 0 ? this.streakSince(t.targetId) : null;
      if (since !== null) streaks.set(t.targetId, since);
    }
    try {
      await this.repo.add(buckets, targets, streaks);
      const now = this.now();
      for (const [targetId, since] of streaks) {
        if (!dueForWarning(since, this.thresholds, now)) continue;
        if (!(await this.repo.warnOnce(targetId, new Date(since)))) continue;
        const disablesAt = new Date(since + this.thresholds.disableAfterMs).toISOString();
        await this.activity.recordForTarget(targetId, {
          kind: 'target.warned',
          actor: DELIVERY_ACTOR,
          detail: `every delivery attempt has failed since ${new Date(since).toISOString()}; it will be disabled at ${disablesAt} unless one succeeds`,
        });
      }
    } catch (err) {
      this.log.warn({ err }, 'target health counters not written');
    }
  }
}
