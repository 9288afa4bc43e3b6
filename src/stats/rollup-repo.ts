import type { Sql } from '../storage/db.js';
import { LATENCY_BUCKETS } from './latency-buckets.js';
import type { RollupRow } from './rollup.js';

/** The count columns of stats_minute and stats_hour, in ROLLUP_COUNTERS order (migration 100). */
const COUNT_COLUMNS = [
  'accepted', 'delivered', 'retrying', 'failed',
  'attempts_2xx', 'attempts_3xx', 'attempts_4xx', 'attempts_5xx', 'attempts_timeout', 'attempts_network',
] as const;

/** The rollup tables, by resolution in seconds. */
export type RollupTable = 'stats_minute' | 'stats_hour';

function upsert(table: RollupTable, param: string): string {
  const counts = COUNT_COLUMNS.map((_, i) => `x.c[${i + 1}]`).join(', ');
  const adds = COUNT_COLUMNS.map((c) => `${c} = s.${c} + EXCLUDED.${c}`).join(', ');
  return `INSERT INTO ${table} AS s (workspace_id, at, queue_name, ${COUNT_COLUMNS.join(', ')}, latency)
    SELECT w.id, to_timestamp(x.at), x.q, ${counts}, x.l
    FROM json_to_recordset(${param}::text::json) AS x(t text, q text, at bigint, c int[], l int[])
    JOIN workspaces w ON w.public_id = x.t
    ORDER BY w.id, x.at, x.q
    ON CONFLICT (workspace_id, at, queue_name) DO UPDATE SET ${adds},
      latency = CASE WHEN cardinality(EXCLUDED.latency) = 0 THEN s.latency ELSE stats_add_buckets(s.latency, EXCLUDED.latency) END`;
}

// Both resolutions in one statement: one round trip, one transaction per flush.
// Rows go in key order, so two writers (threads, nodes) adding to the same
// rows lock them in the same order instead of deadlocking.
const WRITE = `WITH minutes AS (${upsert('stats_minute', '$1')}) ${upsert('stats_hour', '$2')}`;

/** Sums per (queue, step) of a window: the counts, then the latency buckets. */
const READ_COLUMNS = [
  ...COUNT_COLUMNS.map((c) => `sum(${c})::float8`),
  ...Array.from({ length: LATENCY_BUCKETS }, (_, i) => `coalesce(sum(latency[${i + 1}]), 0)::float8`),
].join(', ');

function readQuery(table: RollupTable): string {
  return `SELECT queue_name, (floor(extract(epoch FROM at) / $2) * $2)::float8 AS step, ${READ_COLUMNS}
    FROM ${table}
    WHERE workspace_id = $1 AND at >= to_timestamp($3) AND at < to_timestamp($4) AND ($5::text IS NULL OR queue_name = $5)
    GROUP BY 1, 2`;
}
const READS: Record<RollupTable, string> = { stats_minute: readQuery('stats_minute'), stats_hour: readQuery('stats_hour') };

/** One (queue, step) of a window, summed: counts in ROLLUP_COUNTERS order, then LATENCY_BUCKETS buckets. */
export interface RollupSum {
  queue: string;
  /** The step's start, epoch seconds. */
  at: number;
  counts: number[];
  latency: number[];
}

/**
 * The traffic rollups (migration 100): added to in batches by the stats
 * recorder (src/stats/stats-recorder.ts), summed per step by the stats API.
 * Written with synchronous_commit off: a crash may lose the last second of
 * counts, which a chart can spare, and the flush never waits for fsync.
 */
export class RollupRepo {
  constructor(private readonly sql: Sql) {}

  /** Adds the rows to what is stored: minute rows and hour rows, one statement. */
  async add(minutes: readonly RollupRow[], hours: readonly RollupRow[]): Promise<void> {
    if (minutes.length === 0 && hours.length === 0) return;
    const json = (rows: readonly RollupRow[]) => JSON.stringify(rows.map((r) => ({ t: r.tenant, q: r.queue, at: r.at, c: r.counts, l: r.latency })));
    await this.sql.begin(async (tx) => {
      await tx`SET LOCAL synchronous_commit = off`;
      await tx.unsafe(WRITE, [json(minutes), json(hours)]);
    });
  }

  /** Sums of `table`'s rows of the workspace in [fromS, toS), per queue (or only `queue`) and step. */
  async sums(table: RollupTable, workspaceId: string, stepSeconds: number, fromS: number, toS: number, queue: string | null): Promise<RollupSum[]> {
    const rows = (await this.sql.unsafe(READS[table], [workspaceId, stepSeconds, fromS, toS, queue]).values()) as unknown as Array<[string, number, ...number[]]>;
    const counters = COUNT_COLUMNS.length;
    return rows.map((r) => ({
      queue: r[0],
      at: r[1],
      counts: r.slice(2, 2 + counters) as number[],
      latency: r.slice(2 + counters) as number[],
    }));
  }
}
