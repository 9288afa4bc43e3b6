import type { Sql } from './db.js';
import { newId } from '../ids.js';
import { linePattern } from './delivery-state-codec.js';

export type RedeliveryJobStatus = 'running' | 'done' | 'failed' | 'cancelled';
/** failed: the target's failed deliveries in [from, to); replay: every delivery it did not acknowledge since `from` (migration 110). */
export type RedeliveryJobKind = 'failed' | 'replay';

export interface RedeliveryJobRow {
  id: string;
  publicId: string;
  workspaceId: string;
  targetId: string;
  kind: RedeliveryJobKind;
  from: Date;
  to: Date;
  cutoff: string;
  status: RedeliveryJobStatus;
  total: number;
  done: number;
  failed: number;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A failed delivery a job hands over: where its event is in the log, and where the job goes on from. */
export interface FailedDelivery {
  eventId: string;
  receivedAt: string;
  logPartition: number;
  logOffset: bigint;
}

/** Which failed deliveries a job (or its dry run) covers. */
export interface FailedRange {
  workspaceId: string;
  targetId: string;
  from: Date;
  to: Date;
  /**
   * Only deliveries failed at this time count (a job's own redeliveries,
   * failing again, are not its work). ISO-8601 with microseconds, as the
   * database printed it: compared with times the database wrote.
   */
  cutoff: string;
}


/** A timestamptz as ISO-8601 UTC text with its microseconds. */
const MICROS = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * Bulk redelivery jobs (migration 040) and the failed deliveries they cover.
 * Progress lives here, so any management node answers a poll.
 */
export class RedeliveryJobRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** A job row; the cutoff as text with its microseconds (a JS Date would round them). */
  private columns() {
    return this.sql`id::text, public_id AS "publicId", workspace_id::text AS "workspaceId", target_id::text AS "targetId", kind,
      from_at AS "from", to_at AS "to", ${this.sql.unsafe(MICROS('cutoff_at'))} AS "cutoff", status, total, done, failed, error,
      created_at AS "createdAt", finished_at AS "finishedAt"`;
  }

  /** The database's clock: a job's cutoff is compared with times the database wrote. */
  async now(): Promise<string> {
    const [row] = await this.sql<{ now: string }[]>`SELECT ${this.sql.unsafe(MICROS('now()'))} AS now`;
    return row!.now;
  }

  /**
   * The events of the range whose delivery to the target failed at the
   * cutoff: read through event_log_open_idx (events with a delivery not
   * delivered, migration 090), the target's line matched in the deliveries
   * text, its update time (ms after receipt) against the cutoff.
   */
  private failedWhere(r: FailedRange) {
    return this.sql`
      e.workspace_id = ${r.workspaceId} AND e.received_at >= ${r.from} AND e.received_at < ${r.to}
      AND event_deliveries_open(e.deliveries)
      AND e.received_at + substring(e.deliveries FROM ${linePattern(r.targetId, 'failed', 'updated')})::bigint * interval '1 millisecond'
          <= ${r.cutoff}::timestamptz`;
  }

  /** Failed deliveries of the target for events received in [from, to). */
  async countFailed(r: FailedRange): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log e WHERE ${this.failedWhere(r)}`;
    return row!.n;
  }

  /** The next `limit` failed deliveries after `after` (oldest first, keyset on received time and event id). */
  async nextFailed(r: FailedRange, after: { receivedAt: string; eventId: string } | null, limit: number): Promise<FailedDelivery[]> {
    const rows = await this.sql<Array<Omit<FailedDelivery, 'logOffset'> & { logOffset: string }>>`
      SELECT e.event_id AS "eventId",
             ${this.sql.unsafe(MICROS('e.received_at'))} AS "receivedAt",
             e.log_partition AS "logPartition", e.log_offset::text AS "logOffset"
      FROM event_log e
      WHERE ${this.failedWhere(r)}
        ${after ? this.sql`AND (e.received_at, e.event_id) > (${after.receivedAt}::timestamptz, ${after.eventId})` : this.sql``}
      ORDER BY e.received_at, e.event_id
      LIMIT ${limit}`;
    return rows.map((row) => ({ ...row, logOffset: BigInt(row.logOffset) }));
  }

  /**
   * Creates a running job, or null when the target has one running already.
   * A running job whose node stopped beating is failed first, so it does not
   * block the target forever.
   */
  async create(r: FailedRange, total: number, staleAfterMs: number, kind: RedeliveryJobKind = 'failed'): Promise<RedeliveryJobRow | null> {
    await this.expireStale(staleAfterMs);
    const rows = await this.sql<RedeliveryJobRow[]>`
      INSERT INTO redelivery_jobs (public_id, workspace_id, target_id, from_at, to_at, cutoff_at, status, total, kind)
      VALUES (${newId('rdj')}, ${r.workspaceId}, ${r.targetId}, ${r.from}, ${r.to}, ${r.cutoff}, 'running', ${total}, ${kind})
      ON CONFLICT (target_id) WHERE status = 'running' DO NOTHING
      RETURNING ${this.columns()}`;
    return rows[0] ?? null;
  }

  async byPublicId(workspaceId: string, publicId: string, staleAfterMs: number): Promise<RedeliveryJobRow | null> {
    await this.expireStale(staleAfterMs, publicId);
    const [row] = await this.sql<RedeliveryJobRow[]>`
      SELECT ${this.columns()} FROM redelivery_jobs WHERE workspace_id = ${workspaceId} AND public_id = ${publicId}`;
    return row ?? null;
  }

  /**
   * Adds a batch to the job's counters; also its heartbeat. False when the job
   * is no longer running (cancelled while the batch was handed over): the batch
   * is counted all the same, since its deliveries went to delivery, so `done`
   * says what the receiver gets.
   */
  async progress(id: string, done: number, failed: number): Promise<boolean> {
    const [row] = await this.sql<{ status: RedeliveryJobStatus }[]>`
      UPDATE redelivery_jobs SET done = done + ${done}, failed = failed + ${failed},
        heartbeat_at = CASE WHEN status = 'running' THEN now() ELSE heartbeat_at END
      WHERE id = ${id}
      RETURNING status`;
    return row?.status === 'running';
  }

  /**
   * Cancels a running job (whichever node runs it stops at its next batch): the
   * job as it stands, and whether this call cancelled it (false: it had ended,
   * or another call cancelled it first); null when there is no such job.
   */
  async cancel(workspaceId: string, publicId: string): Promise<{ job: RedeliveryJobRow; cancelledNow: boolean } | null> {
    const changed = await this.sql`
      UPDATE redelivery_jobs SET status = 'cancelled', finished_at = now()
      WHERE workspace_id = ${workspaceId} AND public_id = ${publicId} AND status = 'running'`;
    const [job] = await this.sql<RedeliveryJobRow[]>`
      SELECT ${this.columns()} FROM redelivery_jobs WHERE workspace_id = ${workspaceId} AND public_id = ${publicId}`;
    return job ? { job, cancelledNow: changed.count > 0 } : null;
  }

  async heartbeat(id: string): Promise<void> {
    await this.sql`UPDATE redelivery_jobs SET heartbeat_at = now() WHERE id = ${id} AND status = 'running'`;
  }

  async finish(id: string, status: 'done' | 'failed', error: string | null = null): Promise<void> {
    await this.sql`
      UPDATE redelivery_jobs SET status = ${status}, error = ${error}, finished_at = now()
      WHERE id = ${id} AND status = 'running'`;
  }

  /** Running jobs whose node stopped beating (it went away): failed, finished when last heard of. */
  private async expireStale(staleAfterMs: number, publicId?: string): Promise<void> {
    await this.sql`
      UPDATE redelivery_jobs
      SET status = 'failed', finished_at = heartbeat_at, error = 'the management node running the job stopped'
      WHERE status = 'running' AND heartbeat_at < now() - ${staleAfterMs}::int * interval '1 millisecond'
        ${publicId !== undefined ? this.sql`AND public_id = ${publicId}` : this.sql``}`;
  }
}
