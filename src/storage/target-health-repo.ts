import type { Sql } from './db.js';
import type { BucketTally, TargetTally } from '../delivery/health/health-tally.js';

/** A target with what its health is made of (GET /v1/tenants/{tenant}/target-health). */
export interface TargetHealthRow {
  id: string;
  publicId: string;
  name: string;
  disabledAt: Date | null;
  disabledReason: string | null;
  /** targets.failing_since: the current streak's start, shared by every node. */
  failingSince: Date | null;
  /** The last streak's start as delivery last wrote it: kept when disabling clears failing_since. */
  streakStartedAt: Date | null;
  consecutiveFailures: number;
  lastError: string | null;
  lastErrorAt: Date | null;
  lastSuccessAt: Date | null;
  attempts: number;
  succeeded: number;
  latencyMsSum: number;
  latencyMsMax: number | null;
}

/**
 * Target health (migration 110): counters written in batches by delivery
 * nodes, read per workspace over a window by the management API.
 */
export class TargetHealthRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * Adds one node's counters: buckets are summed, the failure count reset by
   * a batch with a success and added to otherwise. Targets deleted meanwhile
   * are skipped (joined with targets), so a batch never fails on them.
   * `streaks`: the streak start each failing target has, as the node last read it.
   */
  async add(buckets: readonly BucketTally[], targets: readonly TargetTally[], streaks: ReadonlyMap<string, number>): Promise<void> {
    if (buckets.length === 0 && targets.length === 0) return;
    // Times as ISO text: exact to the millisecond (to_timestamp of a float is not).
    const iso = (ms: number | null | undefined) => (ms == null ? null : new Date(ms).toISOString());
    const b = JSON.stringify(buckets.map((x) => ({ t: x.targetId, at: iso(x.bucketAt), n: x.attempts, ok: x.succeeded, s: x.latencyMsSum, m: x.latencyMsMax })));
    const t = JSON.stringify(targets.map((x) => ({
      t: x.targetId, f: x.tailFailures, ls: iso(x.lastSuccessAt), e: x.lastError, ea: iso(x.lastErrorAt), ss: iso(streaks.get(x.targetId)),
    })));
    await this.sql.begin(async (tx) => {
      await tx`SET LOCAL synchronous_commit = off`;
      // Key order, as every batch writer does: two nodes' batches then wait for each other instead of deadlocking.
      await tx`
        INSERT INTO target_health_buckets (target_id, bucket_at, attempts, succeeded, latency_ms_sum, latency_ms_max)
        SELECT x.t, x.at, x.n, x.ok, x.s, x.m
        FROM json_to_recordset(${b}::text::json) AS x(t bigint, at timestamptz, n int, ok int, s bigint, m int)
        JOIN targets g ON g.id = x.t
        ORDER BY x.t, x.at
        ON CONFLICT (target_id, bucket_at) DO UPDATE SET
          attempts = target_health_buckets.attempts + EXCLUDED.attempts,
          succeeded = target_health_buckets.succeeded + EXCLUDED.succeeded,
          latency_ms_sum = target_health_buckets.latency_ms_sum + EXCLUDED.latency_ms_sum,
          latency_ms_max = greatest(target_health_buckets.latency_ms_max, EXCLUDED.latency_ms_max)`;
      await tx`
        INSERT INTO target_health (target_id, consecutive_failures, last_error, last_error_at, last_success_at, streak_started_at)
        -- A disabled target's streak stays the one that disabled it (an attempt in flight may fail after).
        SELECT x.t, x.f, x.e, x.ea, x.ls, CASE WHEN g.disabled_at IS NULL THEN x.ss END
        FROM json_to_recordset(${t}::text::json) AS x(t bigint, f int, ls timestamptz, e text, ea timestamptz, ss timestamptz)
        JOIN targets g ON g.id = x.t
        ORDER BY x.t
        ON CONFLICT (target_id) DO UPDATE SET
          consecutive_failures = CASE WHEN EXCLUDED.last_success_at IS NOT NULL THEN EXCLUDED.consecutive_failures
                                      ELSE target_health.consecutive_failures + EXCLUDED.consecutive_failures END,
          last_error = coalesce(EXCLUDED.last_error, target_health.last_error),
          last_error_at = coalesce(EXCLUDED.last_error_at, target_health.last_error_at),
          last_success_at = greatest(EXCLUDED.last_success_at, target_health.last_success_at),
          streak_started_at = coalesce(EXCLUDED.streak_started_at, target_health.streak_started_at)`;
    });
  }

  /**
   * Records that the workspace was warned about the streak that began at
   * `since`; false when it was already (by this node or another), or the
   * target is disabled or gone: one warning per streak, cluster-wide.
   */
  async warnOnce(targetId: string, since: Date): Promise<boolean> {
    const rows = await this.sql`
      INSERT INTO target_health (target_id, warned_for, streak_started_at)
      SELECT id, ${since}, ${since} FROM targets WHERE id = ${targetId} AND disabled_at IS NULL
      ON CONFLICT (target_id) DO UPDATE SET warned_for = EXCLUDED.warned_for
        WHERE target_health.warned_for IS DISTINCT FROM EXCLUDED.warned_for
      RETURNING target_id`;
    return rows.length > 0;
  }

  /** Every target of the workspace with its health facts; counts over buckets from `from` on. */
  async list(workspaceId: string, from: Date): Promise<TargetHealthRow[]> {
    return this.sql<TargetHealthRow[]>`
      SELECT t.id::text, t.public_id AS "publicId", t.name, t.disabled_at AS "disabledAt", t.disabled_reason AS "disabledReason",
             t.failing_since AS "failingSince", h.streak_started_at AS "streakStartedAt",
             coalesce(h.consecutive_failures, 0) AS "consecutiveFailures", h.last_error AS "lastError",
             h.last_error_at AS "lastErrorAt", h.last_success_at AS "lastSuccessAt",
             coalesce(b.attempts, 0)::int AS attempts, coalesce(b.succeeded, 0)::int AS succeeded,
             coalesce(b.lsum, 0)::float8 AS "latencyMsSum", b.lmax AS "latencyMsMax"
      FROM targets t
      LEFT JOIN target_health h ON h.target_id = t.id
      LEFT JOIN LATERAL (
        SELECT sum(attempts) AS attempts, sum(succeeded) AS succeeded, sum(latency_ms_sum) AS lsum, max(latency_ms_max) AS lmax
        FROM target_health_buckets WHERE target_id = t.id AND bucket_at >= ${from}
      ) b ON true
      WHERE t.workspace_id = ${workspaceId}
      ORDER BY t.name`;
  }
}
