import type { Sql } from './db.js';

/** What a replay covers: one target's deliveries of events received from `since` that it did not acknowledge by `cutoff`. */
export interface MissedRange {
  workspaceId: string;
  targetId: string;
  since: Date;
  /** ISO-8601 with microseconds, as the database printed it (RedeliveryJobRepo.now). */
  cutoff: string;
}

/** A missed delivery: where its event is in the log, and the partition key its lane is kept by. */
export interface MissedDelivery {
  eventId: string;
  receivedAt: string;
  logPartition: number;
  logOffset: bigint;
  partitionKey: string | null;
}

/** Where a replay goes on from: keyset on the log position, so each partition's events come in log order. */
export interface MissedPosition {
  logPartition: number;
  logOffset: bigint;
}

const MICROS = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * The one query replay adds (docs/api.md#replay): a target's deliveries that
 * are over without a 2xx, `failed` (dead-lettered, or a 4xx it refused) or
 * `blocked` (the target was disabled), for events received since a time and
 * by the job's cutoff. Delivered ones are never in it (the receiver
 * acknowledged them), nor `retrying`/`pending` ones (a lane or a redelivery
 * still holds them: sending them again would duplicate).
 *
 *   delivery_log d (target_id, status IN failed|blocked, updated_at <= cutoff, received_at in [since, cutoff])
 *     JOIN event_log e ON (log_partition, log_offset, received_at), e.workspace_id = the job's
 *   ORDER BY d.log_partition, d.log_offset        (keyset: (partition, offset) > the last one)
 *
 * It reads delivery_log_open_idx (target_id, status WHERE status <> 'delivered').
 */
export class MissedDeliveryRepo {
  constructor(private readonly sql: Sql) {}

  async count(r: MissedRange): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`
      SELECT count(*)::int AS n ${this.from(r, null)}`;
    return row!.n;
  }

  /** The next `limit` missed deliveries after `after`, in log order. */
  async next(r: MissedRange, after: MissedPosition | null, limit: number): Promise<MissedDelivery[]> {
    const rows = await this.sql<Array<Omit<MissedDelivery, 'logOffset'> & { logOffset: string }>>`
      SELECT e.event_id AS "eventId", ${this.sql.unsafe(MICROS('e.received_at'))} AS "receivedAt",
             d.log_partition AS "logPartition", d.log_offset::text AS "logOffset", e.partition_key AS "partitionKey"
      ${this.from(r, after)}
      ORDER BY d.log_partition, d.log_offset
      LIMIT ${limit}`;
    return rows.map((row) => ({ ...row, logOffset: BigInt(row.logOffset) }));
  }

  private from(r: MissedRange, after: MissedPosition | null) {
    return this.sql`
      FROM delivery_log d JOIN event_log e
        ON e.log_partition = d.log_partition AND e.log_offset = d.log_offset AND e.received_at = d.received_at
      WHERE d.target_id = ${r.targetId} AND d.status IN ('failed', 'blocked') AND d.updated_at <= ${r.cutoff}::timestamptz
        AND d.received_at >= ${r.since} AND d.received_at <= ${r.cutoff}::timestamptz
        AND e.workspace_id = ${r.workspaceId} AND e.received_at >= ${r.since}
        ${after ? this.sql`AND (d.log_partition, d.log_offset) > (${after.logPartition}, ${after.logOffset.toString()}::bigint)` : this.sql``}`;
  }
}
