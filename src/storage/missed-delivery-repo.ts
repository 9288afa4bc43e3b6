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
 *   event_log e (workspace, received_at in [since, cutoff], still open: event_log_open_idx)
 *     whose deliveries hold a line `<target>:f|b:<updated ms>:` written by the cutoff
 *   ORDER BY e.log_partition, e.log_offset        (keyset: (partition, offset) > the last one)
 *
 * The delivery state lives in the event's row (migration 090,
 * src/storage/delivery-state-codec.ts); the update time of a line is in ms
 * after the event's receipt.
 */
export class MissedDeliveryRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async count(r: MissedRange): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`
      SELECT count(*)::int AS n ${this.from(r, null)}`;
    return row!.n;
  }

  /** The next `limit` missed deliveries after `after`, in log order. */
  async next(r: MissedRange, after: MissedPosition | null, limit: number): Promise<MissedDelivery[]> {
    const rows = await this.sql<Array<Omit<MissedDelivery, 'logOffset'> & { logOffset: string }>>`
      SELECT e.event_id AS "eventId", ${this.sql.unsafe(MICROS('e.received_at'))} AS "receivedAt",
             e.log_partition AS "logPartition", e.log_offset::text AS "logOffset", e.partition_key AS "partitionKey"
      ${this.from(r, after)}
      ORDER BY e.log_partition, e.log_offset
      LIMIT ${limit}`;
    return rows.map((row) => ({ ...row, logOffset: BigInt(row.logOffset) }));
  }

  private from(r: MissedRange, after: MissedPosition | null) {
    // The target's line when it is failed or blocked, capturing its update time (ms after receipt).
    const line = missedLinePattern(r.targetId);
    return this.sql`
      FROM event_log e
      WHERE e.workspace_id = ${r.workspaceId} AND e.received_at >= ${r.since} AND e.received_at <= ${r.cutoff}::timestamptz
        AND event_deliveries_open(e.deliveries) AND e.deliveries ~ ${line}
        AND e.received_at + coalesce(nullif((regexp_match(e.deliveries, ${line}))[1], '')::bigint, 0) * interval '1 millisecond'
            <= ${r.cutoff}::timestamptz
        ${after ? this.sql`AND (e.log_partition, e.log_offset) > (${after.logPartition}, ${after.logOffset.toString()}::bigint)` : this.sql``}`;
  }
}

/** A target's line in failed or blocked state, one capture: its update time. */
function missedLinePattern(targetId: string): string {
  if (!/^\d+$/.test(targetId)) throw new Error(`not a target id: ${targetId}`);
  return `(?:^|\n)${targetId}:[fb]:(-?\\d*):`;
}
