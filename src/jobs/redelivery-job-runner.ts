import type { Logger } from '../observability/logger.js';
import type { FailedRange, RedeliveryJobRepo, RedeliveryJobRow } from '../storage/redelivery-job-repo.js';
import type { RedeliveryOrder } from '../api/events/redeliver.js';

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
 * failed. Deliveries handed over before that stay handed over.
 */
export class RedeliveryJobRunner {
  private readonly running = new Map<string, { stop: boolean; done: Promise<void> }>();

  constructor(
    private readonly jobs: Pick<RedeliveryJobRepo, 'nextFailed' | 'progress' | 'heartbeat' | 'finish'>,
    /** The single-event redelivery path (src/api/events/redeliver.ts), bound to this node. */
    private readonly redeliver: (orders: readonly RedeliveryOrder[]) => Promise<{ gone: RedeliveryOrder[] }>,
    private readonly log: Logger,
  ) {}

  start(job: RedeliveryJobRow): void {
    const state = { stop: false, done: Promise.resolve() };
    state.done = this.run(job, state).finally(() => this.running.delete(job.id));
    this.running.set(job.id, state);
  }

  /** Stops every job of this node (it is going away) and marks them failed. */
  async drain(): Promise<void> {
    for (const state of this.running.values()) state.stop = true;
    await Promise.all([...this.running.values()].map((s) => s.done));
  }

  private async run(job: RedeliveryJobRow, state: { stop: boolean }): Promise<void> {
    const range: FailedRange = { workspaceId: job.workspaceId, targetId: job.targetId, from: job.from, to: job.to, cutoff: job.cutoff };
    const beat = setInterval(() => {
      this.jobs.heartbeat(job.id).catch((err: unknown) => this.log.warn({ err, jobId: job.publicId }, 'redelivery job heartbeat failed'));
    }, HEARTBEAT_MS);
    beat.unref();
    try {
      let after: { receivedAt: string; eventId: string } | null = null;
      for (;;) {
        if (state.stop) {
          await this.jobs.finish(job.id, 'failed', 'the management node running the job stopped');
          return;
        }
        const batch = await this.jobs.nextFailed(range, after, BATCH);
        if (batch.length === 0) break;
        const { gone } = await this.redeliver(batch.map((d) => ({
          eventId: d.eventId, targetIds: [job.targetId], logPartition: d.logPartition, logOffset: d.logOffset, receivedAt: d.receivedAt,
        })));
        await this.jobs.progress(job.id, batch.length - gone.length, gone.length);
        const last = batch[batch.length - 1]!;
        after = { receivedAt: last.receivedAt, eventId: last.eventId };
      }
      await this.jobs.finish(job.id, 'done');
      this.log.info({ jobId: job.publicId }, 'redelivery job done');
    } catch (err) {
      this.log.error({ err, jobId: job.publicId }, 'redelivery job failed');
      await this.jobs.finish(job.id, 'failed', 'the job stopped on an error (see the node log)').catch(() => {});
    } finally {
      clearInterval(beat);
    }
  }
}
