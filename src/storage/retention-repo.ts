import type { TransactionSql } from 'postgres';
import type { Sql } from './db.js';
import { parsePartitionName, partitionName, partitionsToCreate, type PartitionRange } from './partition-plan.js';

/** The per-event table, range-partitioned by received_at (migration 070), its deliveries inside each row (090). */
export const PARTITIONED_TABLES = ['event_log'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** The tables the retention figures report: the partitioned ones and the small ones that grow per event. */
export const REPORTED_TABLES = [...PARTITIONED_TABLES, 'parked_deliveries', 'redelivery_requests', 'redelivery_jobs', 'stats_minute', 'stats_ten_minutes', 'stats_hour'] as const;

export interface PartitionRow {
  name: string;
  /** null: the DEFAULT partition (or a partition not named by partitionName, never dropped). */
  range: PartitionRange | null;
}

/** What a table keeps, from the catalog (estimates, never count(*)). */
export interface TableFigures {
  table: string;
  /** pg_class.reltuples summed over the partitions: the planner's estimate, refreshed by (auto)analyze. */
  rows: number;
  /** pg_total_relation_size summed over the partitions: heap, TOAST and indexes. */
  bytes: number;
  /** Receive time of about the oldest record kept (event_log); null when empty or not timed. */
  oldestMs: number | null;
}

/** Fixed 64-bit numbers: one sweeper in the cluster at a time; partition DDL one transaction at a time. */
const SWEEP_LOCK = 7_431_022_624;
const DDL_LOCK = 7_431_022_625;

/** Rows of a partition read to find about its oldest (the heap is in about insert order). */
const OLDEST_SAMPLE = 1000;

/**
 * The retention sweep's statements (src/jobs/retention-sweep.ts): partitions
 * created ahead and dropped whole, and the few deletes by age that remain, each
 * bounded by a LIMIT so that no statement holds locks or scans for long.
 */
export class RetentionRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * Runs `fn` if no other node is sweeping (a transaction-scoped advisory lock,
   * held by one pooled connection for the sweep's duration and released when
   * that transaction ends, or when the node dies); null otherwise. Not a
   * session lock on a reserve()d connection: postgres.js 3.4.9 can throw an
   * uncatchable TypeError from a reserved connection whose socket died
   * (porsager/postgres#1208), which would take the node down in an outage.
   */
  async whileSweepLocked<T>(fn: () => Promise<T>): Promise<T | null> {
    let result: T | null = null;
    await this.sql.begin(async (tx) => {
      const [row] = await tx<{ ok: boolean }[]>`SELECT pg_try_advisory_xact_lock(${SWEEP_LOCK}) AS ok`;
      if (row?.ok) result = await fn();
    });
    return result;
  }

  /** Whether the server runs autovacuum (the `autovacuum` setting; its daemon reclaims dead rows). */
  async autovacuumOn(): Promise<boolean> {
    const [row] = await this.sql<{ on: string }[]>`SELECT current_setting('autovacuum') AS on`;
    return row?.on === 'on';
  }

  partitions(table: PartitionedTable): Promise<PartitionRow[]> {
    return partitionsOf(this.sql, table);
  }

  /**
   * Creates the partitions missing over [now rounded down, now + ahead) in one
   * short transaction per table (several nodes starting at once take turns).
   * `lockTimeoutMs` bounds the wait for the table lock CREATE needs: behind a
   * long query it gives up (the next sweep tries again) rather than queue the
   * inserts behind itself. Returns the names created.
   */
  async ensurePartitions(nowMs: number, widthMs: number, aheadByMs: number, lockTimeoutMs: number): Promise<string[]> {
    const created: string[] = [];
    for (const table of PARTITIONED_TABLES) {
      await this.sql.begin(async (tx) => {
        await tx`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`;
        await tx`SELECT pg_advisory_xact_lock(${DDL_LOCK})`;
        const existing = (await partitionsOf(tx, table)).flatMap((p) => (p.range ? [p.range] : []));
        for (const range of partitionsToCreate(existing, nowMs, widthMs, aheadByMs)) {
          const name = partitionName(table, range);
          const from = new Date(range.fromMs).toISOString();
          const to = new Date(range.toMs).toISOString();
          const def = `${table}_default`;
          const [stray] = await tx`SELECT 1 FROM ${tx(def)} WHERE received_at >= ${from} AND received_at < ${to} LIMIT 1`;
          if (!stray) {
            await tx.unsafe(`CREATE TABLE ${ident(name)} PARTITION OF ${ident(table)} FOR VALUES FROM ('${from}') TO ('${to}')`);
          } else {
            // Rows that arrived before their partition (a clock ahead, a sweep
            // that did not run) sit in DEFAULT, where CREATE … PARTITION OF
            // would refuse them: move them into a table that then becomes the partition.
            await tx.unsafe(`CREATE TABLE ${ident(name)} (LIKE ${ident(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
            await tx.unsafe(`WITH moved AS (DELETE FROM ${ident(def)} WHERE received_at >= '${from}' AND received_at < '${to}' RETURNING *)
                             INSERT INTO ${ident(name)} SELECT * FROM moved`);
            await tx.unsafe(`ALTER TABLE ${ident(table)} ATTACH PARTITION ${ident(name)} FOR VALUES FROM ('${from}') TO ('${to}')`);
          }
          created.push(name);
        }
      });
    }
    return created;
  }

  /** Drops one partition (a metadata change: no rows are read). */
  async dropPartition(name: string, lockTimeoutMs: number): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`;
      await tx`SELECT pg_advisory_xact_lock(${DDL_LOCK})`;
      await tx.unsafe(`DROP TABLE IF EXISTS ${ident(name)}`);
    });
  }

  /** Deletes up to `limit` rows of the DEFAULT partition received before `cutoff`. */
  async deleteFromDefault(table: PartitionedTable, cutoff: Date, limit: number): Promise<number> {
    const def = `${table}_default`;
    const rows = await this.sql`
      DELETE FROM ${this.sql(def)} WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM ${this.sql(def)} WHERE received_at < ${cutoff} LIMIT ${limit}))`;
    return rows.count;
  }

  /** Workspaces with a retention of their own (workspaces.retention_hours), in ms. */
  async workspaceRetentions(): Promise<Array<{ workspaceId: string; retentionMs: number }>> {
    const rows = await this.sql<{ workspaceId: string; ms: number }[]>`
      SELECT id::text AS "workspaceId", (retention_hours * 3600000)::float8 AS ms
      FROM workspaces WHERE retention_hours IS NOT NULL`;
    return rows.map((r) => ({ workspaceId: r.workspaceId, retentionMs: r.ms }));
  }

  /** One workspace's retention in ms, null when it follows retention.hours. */
  async workspaceRetentionMs(workspaceId: string): Promise<number | null> {
    const [row] = await this.sql<{ ms: number | null }[]>`
      SELECT (retention_hours * 3600000)::float8 AS ms FROM workspaces WHERE id = ${workspaceId}`;
    return row?.ms ?? null;
  }

  /**
   * Deletes up to `limit` events of the workspace received before `cutoff`
   * (their deliveries are in their rows) in one statement. Partitions wholly
   * newer than the cutoff are not read (pruned by received_at).
   */
  async deleteWorkspaceEvents(workspaceId: string, cutoff: Date, limit: number): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`
      WITH doomed AS (
        SELECT event_id, received_at FROM event_log
        WHERE workspace_id = ${workspaceId} AND received_at < ${cutoff}
        LIMIT ${limit}
      ), gone AS (
        DELETE FROM event_log e USING doomed d
        WHERE e.event_id = d.event_id AND e.received_at = d.received_at AND e.received_at < ${cutoff}
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`;
    return row!.n;
  }

  /** Deletes up to `limit` bulk redelivery jobs finished before `cutoff` (of one workspace, or all). */
  async deleteFinishedJobs(cutoff: Date, limit: number, workspaceId?: string): Promise<number> {
    const rows = await this.sql`
      DELETE FROM redelivery_jobs WHERE id = ANY(ARRAY(
        SELECT id FROM redelivery_jobs WHERE finished_at < ${cutoff}
          ${workspaceId !== undefined ? this.sql`AND workspace_id = ${workspaceId}` : this.sql``}
        LIMIT ${limit}))`;
    return rows.count;
  }

  /** Deletes up to `limit` activity entries older than `cutoff` (of one workspace, or all; migration 110). */
  async deleteActivity(cutoff: Date, limit: number, workspaceId?: string): Promise<number> {
    const rows = await this.sql`
      DELETE FROM activity WHERE id = ANY(ARRAY(
        SELECT id FROM activity WHERE at < ${cutoff}
          ${workspaceId !== undefined ? this.sql`AND workspace_id = ${workspaceId}` : this.sql``}
        LIMIT ${limit}))`;
    return rows.count;
  }

  /** Deletes up to `limit` target-health counter buckets older than `cutoff`. */
  async deleteHealthBuckets(cutoff: Date, limit: number): Promise<number> {
    const rows = await this.sql`
      DELETE FROM target_health_buckets WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM target_health_buckets WHERE bucket_at < ${cutoff} LIMIT ${limit}))`;
    return rows.count;
  }

  /**
   * Deletes up to `limit` rows of each traffic rollup table (migration 100)
   * wholly before `cutoff` (of one workspace, or all): a row whose minute,
   * 10 minutes or hour ended by then. The BRIN index on `at` finds them.
   */
  async deleteRollups(cutoff: Date, limit: number, workspaceId?: string): Promise<number> {
    let deleted = 0;
    for (const [table, spanMs] of [['stats_minute', 60_000], ['stats_ten_minutes', 600_000], ['stats_hour', 3_600_000]] as const) {
      const before = new Date(cutoff.getTime() - spanMs + 1);
      const rows = await this.sql`
        DELETE FROM ${this.sql(table)} WHERE ctid = ANY(ARRAY(
          SELECT ctid FROM ${this.sql(table)} WHERE at < ${before}
            ${workspaceId !== undefined ? this.sql`AND workspace_id = ${workspaceId}` : this.sql``}
          LIMIT ${limit}))`;
      deleted += rows.count;
    }
    return deleted;
  }

  /**
   * Deletes up to `limit` redelivery requests no owner claimed before `cutoff`
   * (their partition had no owner for the whole retention; the record they
   * carry is past retention anyway).
   */
  async deleteUnclaimedRequests(cutoff: Date, limit: number): Promise<number> {
    const rows = await this.sql`
      DELETE FROM redelivery_requests WHERE id = ANY(ARRAY(
        SELECT id FROM redelivery_requests WHERE requested_at < ${cutoff} LIMIT ${limit}))`;
    return rows.count;
  }

  /** Rows and bytes per table from the catalog, and about the oldest receive time kept. */
  async figures(): Promise<TableFigures[]> {
    const sizes = await this.sql<{ table: string; rows: number; bytes: string }[]>`
      SELECT t.name AS table, coalesce(sum(greatest(c.reltuples, 0)), 0)::float8 AS rows,
             coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint::text AS bytes
      FROM unnest(${[...REPORTED_TABLES]}::text[]) AS t(name)
      CROSS JOIN LATERAL (SELECT relid FROM pg_partition_tree(t.name::regclass) UNION SELECT t.name::regclass) p
      JOIN pg_class c ON c.oid = p.relid AND c.relkind = 'r'
      GROUP BY t.name`;
    const out: TableFigures[] = [];
    for (const s of sizes) {
      const table = s.table;
      const oldestMs = (PARTITIONED_TABLES as readonly string[]).includes(table) ? await this.oldest(table as PartitionedTable) : null;
      out.push({ table, rows: s.rows, bytes: Number(s.bytes), oldestMs });
    }
    return out;
  }

  /**
   * About the oldest receive time kept: DEFAULT (normally empty) read whole,
   * then the oldest non-empty partition's first rows, which are about its
   * oldest (rows go in in about receive order). Never a scan of the table.
   */
  private async oldest(table: PartitionedTable): Promise<number | null> {
    const [def] = await this.sql<{ at: Date | null }[]>`SELECT min(received_at) AS at FROM ${this.sql(`${table}_default`)}`;
    const parts = (await this.partitions(table)).filter((p) => p.range).sort((a, b) => a.range!.fromMs - b.range!.fromMs);
    let oldest = def?.at ? def.at.getTime() : null;
    for (const p of parts) {
      if (oldest !== null && oldest <= p.range!.fromMs) break;
      const [row] = await this.sql<{ at: Date | null }[]>`
        SELECT min(received_at) AS at FROM (SELECT received_at FROM ${this.sql(p.name)} LIMIT ${OLDEST_SAMPLE}) s`;
      if (row?.at) return oldest === null ? row.at.getTime() : Math.min(oldest, row.at.getTime());
    }
    return oldest;
  }
}

async function partitionsOf(sql: Sql | TransactionSql, table: PartitionedTable): Promise<PartitionRow[]> {
  const rows = await sql<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = ${table}::regclass`;
  return rows.map((r) => ({ name: r.name, range: parsePartitionName(table, r.name) }));
}

/** A quoted identifier; our names are [a-z0-9_] anyway. */
function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
