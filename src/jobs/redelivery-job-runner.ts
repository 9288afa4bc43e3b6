import type { Logger } from '../observability/logger.js';
import type { FailedRange, RedeliveryJobRepo, RedeliveryJobRow } from '../storage/redelivery-job-repo.js';
import type { MissedDeliveryRepo, MissedPosition } from '../storage/missed-delivery-repo.js';
import type { RedeliveryOrder } from '../api/events/redeliver.js';

/** How a job ended, for the workspace's activity feed. */
export type JobEnd = { status: 'done' | 'failed' | 'cancelled'; handedOver: number; gone: number };

/** Deliveries handed over per step: one page read, one insert of requests, one progress update. */
const BATCH = 100;
/** How often a running job says it is alive, whatever its progress. */
export const HEARTBEAT_MS = 5_000;
/** A running job not heard of for this long has lost its node: polls report it failed. */
export const STALE_AFTER_MS = 60_000;

/**
 * Runs bulk redelivery jobs in the background of this management node.
 *
 *   POST …/targets/{name}/redeliveries ──► job row (running, total)
 *        │
 *        ▼  this runner, one batch at a time, oldest event first:
 *   failed deliveries of the target in [from, to), failed before the job began
 *        │  redeliver(): the single-event path (record read back from the log,
 *        │  redelivery_requests, event_log deliveries → pending)
 *        ▼
 *   progress (done, failed) and heartbeat in the job row ──► any node answers GET
 *
 * A job lives as long as this node: stopping the node (drain) fails it, and a
 * node that dies leaves a row whose heartbeat stops, which a poll then reports
 * failed. Deliveries handed over before that stay handed over. A job
 * cancelled (on any node: its row) stops before its next batch.
 *
 * A replay job (kind `replay`, docs/api.md#replay) reads the target's missed
 * deliveries instead (src/storage/missed-delivery-repo.ts) in log order, and
 * hands each to the parked lane of its partition key within the job
 * ('j:<job id>:<key>'), so a key's events reach the receiver in the order
 * they were received, one after another.
 */
export class RedeliveryJobRunner {
  private readonly running = new Map<string, { stop: boolean; cancelled: boolean; done: Promise<void> }>();

  private readonly jobs: Pick<RedeliveryJobRepo, 'nextFailed' | 'progress' | 'heartbeat' | 'finish'>;
  private readonly redeliver: (orders: readonly RedeliveryOrder[]) => Promise<{ gone: RedeliveryOrder[] }>;
  private readonly log: Logger;
  private readonly missed: Pick<MissedDeliveryRepo, 'next'> | null;
  private readonly onEnd: (job: RedeliveryJobRow, end: JobEnd) => Promise<void>;
  constructor(
    jobs: Pick<RedeliveryJobRepo, 'nextFailed' | 'progress' | 'heartbeat' | 'finish'>,
    /** The single-event redelivery path (src/api/events/redeliver.ts), bound to this node. */
    redeliver: (orders: readonly RedeliveryOrder[]) => Promise<{ gone: RedeliveryOrder[] }>,
    log: Logger,
    /** Replay jobs' source; without it, a replay job fails at once. */
    missed: Pick<MissedDeliveryRepo, 'next'> | null = null,
    /** Told when a job ends (the activity feed); its errors are logged, never the job's. */
    onEnd: (job: RedeliveryJobRow, end: JobEnd) => Promise<void> = async () => {},
  ) {
    this.jobs = jobs;
    this.redeliver = redeliver;
    this.log = log;
    this.missed = missed;
    this.onEnd = onEnd;
  }

  /**
   * Stops a job this node runs (it was cancelled) before its next batch, and
   * resolves once it has stopped: a batch being handed over when the cancel
   * came is finished and counted, so the row then says what the receiver gets.
   * Other nodes' jobs notice at their next batch (resolves at once here).
   */
  cancel(jobId: string): Promise<void> {
    const state = this.running.get(jobId);
    if (!state) return Promise.resolve();
    state.cancelled = true;
    return state.done;
  }

  start(job: RedeliveryJobRow): void {
    const state = { stop: false, cancelled: false, done: Promise.resolve() };
    state.done = this.run(job, state).finally(() => this.running.delete(job.id));
    this.running.set(job.id, state);
  }

  /** Stops every job of this node (it is going away) and marks them failed. */
  async drain(): Promise<void> {
    for (const state of this.running.values()) state.stop = true;
    await Promise.all([...this.running.values()].map((s) => s.done));
  }

  private async run(job: RedeliveryJobRow, state: { stop: boolean; cancelled: boolean }): Promise<void> {
    const beat = setInterval(() => {
      this.jobs.heartbeat(job.id).catch((err: unknown) => this.log.warn({ err, jobId: job.publicId }, 'redelivery job heartbeat failed'));
    }, HEARTBEAT_MS);
    beat.unref();
    const end: JobEnd = { status: 'done', handedOver: 0, gone: 0 };
    try {
      const next = this.batches(job);
      for (;;) {
        if (state.cancelled) {
          end.status = 'cancelled';
          break;
        }
        if (state.stop) {
          await this.jobs.finish(job.id, 'failed', 'the management node running the job stopped');
          end.status = 'failed';
          break;
        }
        const orders = await next();
        if (orders.length === 0) {
          await this.jobs.finish(job.id, 'done');
          this.log.info({ jobId: job.publicId }, 'redelivery job done');
          break;
        }
        const { gone } = await this.redeliver(orders);
        end.handedOver += orders.length - gone.length;
        end.gone += gone.length;
        // False: cancelled meanwhile (by any node); what was handed over stays handed over.
        if (!(await this.jobs.progress(job.id, orders.length - gone.length, gone.length))) {
          end.status = 'cancelled';
          break;
        }
      }
    } catch (err) {
      this.log.error({ err, jobId: job.publicId }, 'redelivery job failed');
      end.status = 'failed';
      await this.jobs.finish(job.id, 'failed', 'the job stopped on an error (see the node log)').catch(() => {});
    } finally {
      clearInterval(beat);
    }
    await this.onEnd(job, end).catch((err: unknown) => this.log.warn({ err, jobId: job.publicId }, 'redelivery job end not recorded'));
  }

  /** The job's orders, one batch per call, oldest first; an empty batch is the end. */
  private batches(job: RedeliveryJobRow): () => Promise<RedeliveryOrder[]> {
    if (job.kind === 'replay') {
      const missed = this.missed;
      if (!missed) throw new Error('replay jobs need the missed-delivery query');
      const range = { workspaceId: job.workspaceId, targetId: job.targetId, since: job.from, cutoff: job.cutoff };
      let after: MissedPosition | null = null;
      return async () => {
        const batch = await missed.next(range, after, BATCH);
        const last = batch[batch.length - 1];
        if (last) after = { logPartition: last.logPartition, logOffset: last.logOffset };
        return batch.map((d) => {
          const order: RedeliveryOrder = { eventId: d.eventId, targetIds: [job.targetId], logPartition: d.logPartition, logOffset: d.logOffset, receivedAt: d.receivedAt };
          // Events of one key share a lane within the job: delivered one after another, in log order.
          if (d.partitionKey !== null) order.laneKey = `j:${job.publicId}:${d.partitionKey}`;
          return order;
        });
      };
    }
    const range: FailedRange = { workspaceId: job.workspaceId, targetId: job.targetId, from: job.from, to: job.to, cutoff: job.cutoff };
    let after: { receivedAt: string; eventId: string } | null = null;
    return async () => {
      const batch = await this.jobs.nextFailed(range, after, BATCH);
      const last = batch[batch.length - 1];
      if (last) after = { receivedAt: last.receivedAt, eventId: last.eventId };
      return batch.map((d) => ({ eventId: d.eventId, targetIds: [job.targetId], logPartition: d.logPartition, logOffset: d.logOffset, receivedAt: d.receivedAt }));
    };
  }
}
