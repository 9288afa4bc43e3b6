import type { Sql } from '../storage/db.js';
import type { RollupRow } from './rollup.js';

/** The count columns of stats_minute and stats_hour, in ROLLUP_COUNTERS order (migration 100). */
const COUNT_COLUMNS = [
  'accepted', 'delivered', 'retrying', 'failed',
  'attempts_2xx', 'attempts_3xx', 'attempts_4xx', 'attempts_5xx', 'attempts_timeout', 'attempts_network',
] as const;

/** The rollup tables, by resolution in seconds. */
export type RollupTable = 'stats_minute' | 'stats_ten_minutes' | 'stats_hour';

/** Each rollup table with the seconds of its rows, in the order a flush writes them. */
export const ROLLUP_TABLES: ReadonlyArray<readonly [RollupTable, number]> = [['stats_minute', 60], ['stats_ten_minutes', 600], ['stats_hour', 3600]];

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

// Every resolution in one statement: one round trip, one transaction per flush.
// Rows go in key order, so two writers (threads, nodes) adding to the same
// rows lock them in the same order instead of deadlocking.
const WRITE = `WITH ${ROLLUP_TABLES.slice(0, -1).map(([table], i) => `w${i} AS (${upsert(table, `$${i + 1}`)})`).join(', ')} `
  + upsert(ROLLUP_TABLES[ROLLUP_TABLES.length - 1]![0], `$${ROLLUP_TABLES.length}`);

// The rows as stored, no aggregate: a window reads the table whose rows are its
// steps, so there is nothing to sum in SQL (64 sums a row were most of the cost).
// Counts as one int[] and the histogram as stored: two array columns to parse.
function readQuery(table: RollupTable): string {
  return `SELECT queue_name, extract(epoch FROM at)::int8::text, ARRAY[${COUNT_COLUMNS.join(', ')}], latency
    FROM ${table}
    WHERE workspace_id = $1 AND at >= to_timestamp($2) AND at < to_timestamp($3) AND ($4::text IS NULL OR queue_name = $4)`;
}
const READS = Object.fromEntries(ROLLUP_TABLES.map(([table]) => [table, readQuery(table)])) as Record<RollupTable, string>;

/** One row of a window: counts in ROLLUP_COUNTERS order, the latency buckets as stored (trailing zeros left out). */
export interface RollupSum {
  queue: string;
  /** The row's start, epoch seconds. */
  at: number;
  counts: number[];
  latency: number[];
}

/**
 * The traffic rollups (migration 100): added to in batches by the stats
 * recorder (src/stats/stats-recorder.ts), read row by row by the stats API.
 */
export class RollupRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Adds the rows to what is stored: one list per table of ROLLUP_TABLES, in its order; one statement. */
  async add(rows: ReadonlyArray<readonly RollupRow[]>): Promise<void> {
    if (rows.every((r) => r.length === 0)) return;
    const json = (list: readonly RollupRow[]) => JSON.stringify(list.map((r) => ({ t: r.tenant, q: r.queue, at: r.at, c: r.counts, l: r.latency })));
    // One statement, no transaction around it: BEGIN, SET LOCAL synchronous_commit
    // and COMMIT would be three more round trips, which cost the node more CPU than
    // the upsert (bench/results/stats-cost.md); the commit's wait for fsync, once
    // a second off the data path, costs it nothing.
    await this.sql.unsafe(WRITE, rows.map(json));
  }

  /** `table`'s rows of the workspace in [fromS, toS), of every queue (or only `queue`). */
  async rows(table: RollupTable, workspaceId: string, fromS: number, toS: number, queue: string | null): Promise<RollupSum[]> {
    const rows = (await this.sql.unsafe(READS[table], [workspaceId, fromS, toS, queue]).values()) as unknown as Array<[string, string, number[], number[]]>;
    return rows.map((r) => ({ queue: r[0], at: Number(r[1]), counts: r[2], latency: r[3] }));
  }
}
