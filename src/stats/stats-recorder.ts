import { answeredChannel, attemptChannel, type AnsweredMessage, type AttemptMessage } from '../observability/channels.js';
import type { Logger } from '../observability/logger.js';
import { outcomeClass } from '../observability/outcome-class.js';
import { backoffDelay } from '../util/backoff.js';
import { Rollup, rowsOf, type AttemptClass } from './rollup.js';
import { ROLLUP_TABLES, type RollupRepo } from './rollup-repo.js';

/** The production ingress route: sandbox events (the other one) are not traffic. */
const INGRESS_ROUTE = '/events/:tenant/:queue';
/** Cells kept while the database is away; past it the oldest counts go (a chart's gap, not an outage). */
const MAX_CELLS = 200_000;

/**
 * Feeds the traffic rollups (migration 100) from what this process does,
 * without a line in the data path: it listens on the channels the metrics
 * listen on (src/observability/channels.ts), like the distribution counters.
 *
 *   answered channel (202 of POST /events/…) ─┐
 *   attempt channel (every real attempt)     ─┴─► Rollup (memory, per queue and minute)
 *                                                   └─ every flushMs ─► one upsert of minute, 10-minute and hour rows
 *
 * Each thread of a threaded node counts its own and adds its own: the upsert
 * adds to the stored counts, so nodes and threads never coordinate.
 */
export class StatsRecorder {
  private readonly rollup = new Rollup();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private failures = 0;
  private running = false;
  private readonly onAttempt = (message: unknown) => this.attempt(message as AttemptMessage);
  private readonly onAnswered = (message: unknown) => this.answered(message as AnsweredMessage);

  private readonly repo: RollupRepo;
  private readonly options: { flushMs: number; ingress: boolean; delivery: boolean };
  private readonly log: Logger;
  private readonly now: () => number;
  constructor(
    repo: RollupRepo,
    options: { flushMs: number; ingress: boolean; delivery: boolean },
    log: Logger,
    now: () => number = Date.now,
  ) {
    this.repo = repo;
    this.options = options;
    this.log = log;
    this.now = now;
  }

  start(): void {
    if (this.options.delivery) attemptChannel.subscribe(this.onAttempt);
    if (this.options.ingress) answeredChannel.subscribe(this.onAnswered);
    this.running = true;
    this.schedule();
  }

  /** Stops listening and writes what is left. */
  async stop(): Promise<void> {
    this.running = false;
    attemptChannel.unsubscribe(this.onAttempt);
    answeredChannel.unsubscribe(this.onAnswered);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }

  attempt(m: AttemptMessage): void {
    const now = this.now();
    // Accept→deliver: from the ingress node's clock to this one's (clamped: clocks differ a little).
    const latency = m.outcome === 'delivered' ? Math.max(0, now - m.record.receivedAt) : null;
    this.rollup.attempt(m.record.tenantPublicId, m.record.queueName, now, m.outcome, attemptClass(m), latency);
  }

  answered(ex: AnsweredMessage): void {
    if (ex.status !== 202 || ex.route !== INGRESS_ROUTE) return;
    const { queue, replayed } = ex.ingress;
    if (queue === null || replayed) return;
    this.rollup.accepted(queue.tenantPublicId, queue.queueName, this.now());
  }

  /** Writes what was counted since the last flush (and waits for a flush under way). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private schedule(): void {
    const delay = this.failures > 0 ? backoffDelay(this.failures, { baseMs: this.options.flushMs, maxMs: 30_000 }) : this.options.flushMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush().finally(() => {
        if (this.running && this.timer === null) this.schedule();
      });
    }, delay);
    this.timer.unref();
  }

  private async write(): Promise<void> {
    if (this.rollup.size === 0) return;
    const cells = this.rollup.take();
    try {
      await this.repo.add(ROLLUP_TABLES.map(([, seconds]) => rowsOf(cells, seconds)));
      this.failures = 0;
    } catch (err) {
      if (this.failures++ === 0) this.log.warn({ err }, 'traffic rollups not written, will retry');
      // Kept for the next flush, newest first if there are too many.
      const kept = cells.length > MAX_CELLS ? [...cells].sort((a, b) => b.at - a.at).slice(0, MAX_CELLS) : cells;
      this.rollup.putBack(kept);
    }
  }
}

/** The rollups' outcome classes: the metrics' ones, a refused address counted as no answer (network). */
function attemptClass(m: AttemptMessage): AttemptClass {
  const c = outcomeClass(m);
  return c === 'ssrf' ? 'network' : c;
}
