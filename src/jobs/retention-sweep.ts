import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { RetentionFigures } from '../observability/metric-sources.js';
import { aheadMs, partitionWidthMs, partitionsToDrop, type PartitionRange } from '../storage/partition-plan.js';
import { PARTITIONED_TABLES, type RetentionRepo } from '../storage/retention-repo.js';

/** How long partition DDL waits for its table lock before giving up until the next sweep. */
const LOCK_TIMEOUT_MS = 5_000;
/** Batches of one kind of delete per sweep at most; what is left waits for the next sweep. */
const MAX_BATCHES = 100;

export interface RetentionOptions {
  retentionMs: number;
  sweepIntervalMs: number;
  deleteBatchRows: number;
}

export function retentionOptions(config: Readonly<Pick<Config, 'retention'>>): RetentionOptions {
  return {
    retentionMs: Math.round(config.retention.hours * 3_600_000),
    sweepIntervalMs: config.retention.sweepIntervalMs,
    deleteBatchRows: config.retention.deleteBatchRows,
  };
}

/** What one sweep did. */
export interface SweepResult {
  created: string[];
  dropped: string[];
  /** Rows deleted by age (DEFAULT partitions, shorter workspace retentions, jobs, requests). */
  deleted: number;
  durationMs: number;
}

/**
 * Creates the time partitions of the per-event tables ahead of now, so rows
 * arriving find theirs (every node, at start, before it writes). Partition DDL
 * is serialised in the database, so nodes starting together take turns.
 */
export async function ensurePartitions(repo: RetentionRepo, options: RetentionOptions, nowMs = Date.now()): Promise<string[]> {
  const width = partitionWidthMs(options.retentionMs);
  return repo.ensurePartitions(nowMs, width, aheadMs(width, options.sweepIntervalMs), LOCK_TIMEOUT_MS);
}

/** SQLSTATE lock_not_available: lock_timeout expired. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * ensurePartitions at a node's start. A table lock not granted in time (a long
 * query holds the table) does not fail the start: rows go to the DEFAULT
 * partitions until a sweep creates theirs.
 */
export async function ensurePartitionsAtStart(repo: RetentionRepo, options: RetentionOptions, log: Logger): Promise<void> {
  try {
    await ensurePartitions(repo, options);
  } catch (err) {
    if ((err as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw err;
    log.warn({ err }, 'time partitions not created at start (table lock not granted in time); the retention sweep will');
  }
}

/**
 * Keeps Postgres bounded (docs/operations.md#retention), on management nodes,
 * every retention.sweepIntervalMs; one node of the cluster sweeps at a time
 * (an advisory lock: the others skip that round).
 *
 *   1. partitions ahead of now (ensurePartitions)
 *   2. partitions entirely past retention.hours: dropped whole
 *   3. by age, in batches of deleteBatchRows, each its own short statement:
 *      DEFAULT-partition rows past retention, the events (and deliveries) of
 *      workspaces keeping less (workspaces.retention_hours), bulk redelivery
 *      jobs finished and redelivery requests never claimed past retention,
 *      traffic rollups (migration 100) past retention
 *   4. the figures the metrics show (catalog estimates), on every management node
 *
 * Parked lanes (parked_deliveries) are never deleted by age: they end with
 * their retry horizon, whatever the retention.
 */
export class RetentionSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private last: RetentionFigures = { tables: [], sweepSeconds: null, sweptAt: null };

  private readonly repo: RetentionRepo;
  private readonly options: RetentionOptions;
  private readonly log: Logger;
  private readonly now: () => number;
  constructor(
    repo: RetentionRepo,
    options: RetentionOptions,
    log: Logger,
    now: () => number = Date.now,
  ) {
    this.repo = repo;
    this.options = options;
    this.log = log;
    this.now = now;
  }

  start(): void {
    void this.checkVacuum();
    const tick = () => {
      this.running ??= this.round().finally(() => (this.running = null));
    };
    // The first round after one interval, not at start: the node made its partitions
    // before it became ready (ensurePartitionsAtStart), and a start (often after an
    // outage) is the worst moment to add a sweep to the pool's load.
    this.timer = setInterval(tick, this.options.sweepIntervalMs);
    this.timer.unref();
  }

  /**
   * Warns (once, at start) when the server runs without autovacuum: retention
   * holds (partitions dropped whole, old rows deleted), yet the dead rows the
   * deletes and delivery's updates leave, and the catalog rows of every
   * partition made and dropped, are never reclaimed, so the database keeps
   * growing (a soak at a 3-minute retention measured +0.12 MB/min of catalogs
   * alone). Answers whether it is on; a failed check says nothing and answers true.
   */
  async checkVacuum(): Promise<boolean> {
    try {
      if (await this.repo.autovacuumOn()) return true;
      this.log.warn(
        'autovacuum is off on this Postgres server: rows that retention deletes or delivery updates, and the catalog rows of the time partitions made and dropped, are not reclaimed, so the database grows although retention holds. Turn it on (autovacuum = on), or VACUUM regularly (docs/operations.md#retention)',
      );
      return false;
    } catch (err) {
      this.log.debug({ err }, 'could not read the autovacuum setting');
      return true;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** The metrics' view: tables' rows, bytes and oldest record, and the last sweep of this node. */
  figures(): RetentionFigures {
    return this.last;
  }

  private async round(): Promise<void> {
    try {
      const result = await this.repo.whileSweepLocked(() => this.sweep());
      if (result) {
        this.last = { ...this.last, sweepSeconds: result.durationMs / 1000, sweptAt: this.now() };
        if (result.dropped.length > 0 || result.deleted > 0) {
          this.log.info({ dropped: result.dropped, deleted: result.deleted, durationMs: result.durationMs }, 'retention sweep');
        }
      }
      this.last = { ...this.last, tables: await this.repo.figures() };
    } catch (err) {
      this.log.warn({ err }, 'retention sweep failed, will retry');
    }
  }

  /** One sweep (the caller holds the sweep lock). */
  async sweep(): Promise<SweepResult> {
    const started = performance.now();
    const now = this.now();
    const { retentionMs, deleteBatchRows: limit } = this.options;
    const created = await ensurePartitions(this.repo, this.options, now);
    const dropped: string[] = [];
    for (const table of PARTITIONED_TABLES) {
      const named = (await this.repo.partitions(table)).filter((p): p is { name: string; range: PartitionRange } => p.range !== null);
      const doomed = new Set(partitionsToDrop(named.map((p) => p.range), now, retentionMs));
      for (const p of named) {
        if (!doomed.has(p.range)) continue;
        await this.repo.dropPartition(p.name, LOCK_TIMEOUT_MS);
        dropped.push(p.name);
      }
    }
    const cutoff = new Date(now - retentionMs);
    let deleted = 0;
    for (const table of PARTITIONED_TABLES) deleted += await batches(() => this.repo.deleteFromDefault(table, cutoff, limit), limit);
    for (const ws of await this.repo.workspaceRetentions()) {
      if (ws.retentionMs >= retentionMs) continue;
      const wsCutoff = new Date(now - ws.retentionMs);
      deleted += await batches(() => this.repo.deleteWorkspaceEvents(ws.workspaceId, wsCutoff, limit), limit);
      deleted += await batches(() => this.repo.deleteFinishedJobs(wsCutoff, limit, ws.workspaceId), limit);
      deleted += await batches(() => this.repo.deleteActivity(wsCutoff, limit, ws.workspaceId), limit);
      deleted += await batches(() => this.repo.deleteRollups(wsCutoff, limit, ws.workspaceId), limit);
    }
    deleted += await batches(() => this.repo.deleteFinishedJobs(cutoff, limit), limit);
    deleted += await batches(() => this.repo.deleteActivity(cutoff, limit), limit);
    // Target health reads at most 7 days of counters, whatever the retention.
    deleted += await batches(() => this.repo.deleteHealthBuckets(new Date(now - HEALTH_BUCKETS_KEPT_MS), limit), limit);
    deleted += await batches(() => this.repo.deleteUnclaimedRequests(cutoff, limit), limit);
    deleted += await batches(() => this.repo.deleteRollups(cutoff, limit), limit);
    return { created, dropped, deleted, durationMs: performance.now() - started };
  }
}

/** The widest target-health window (GET …/target-health?window=7d). */
const HEALTH_BUCKETS_KEPT_MS = 7 * 86_400_000;

/** Runs a bounded delete until it deletes less than a full batch (or MAX_BATCHES times); the rows deleted. */
async function batches(step: () => Promise<number>, limit: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await step();
    total += n;
    if (n < limit) break;
  }
  return total;
}
