import { createHash } from 'node:crypto';
import type { Sql } from './db.js';
import { eventIdTime } from '../ids.js';
import { decodeAttempts, encodeAttempts, type AttemptEntry } from './attempt-codec.js';

export type { AttemptEntry } from './attempt-codec.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'retrying' | 'failed' | 'blocked';

export interface EventRowInput {
  eventId: string;
  workspaceId: string;
  queueName: string;
  eventType: string | null;
  groupKey: string | null;
  partitionKey: string | null;
  idempotencyKey: string | null;
  receivedAt: number;
  partition: number;
  offset: bigint;
  runId: string | null;
  targetIds: readonly string[];
}

export interface DeliveryRowInput {
  eventId: string;
  targetId: string;
  status: DeliveryStatus;
  /** Attempts since the last write: appended to what is stored. */
  attempts: AttemptEntry[];
  /** '<consumer group>/<topic>' (see migration 030). */
  stream: string;
  partition: number;
  offset: bigint;
  /** The event's receive time (epoch ms): the row's partition, the event's (migration 070). */
  receivedAt: number;
}

export interface EventView {
  eventId: string;
  queueName: string;
  eventType: string | null;
  groupKey: string | null;
  partitionKey: string | null;
  idempotencyKey: string | null;
  receivedAt: Date;
  runId: string | null;
  logPartition: number;
  logOffset: bigint;
  deliveries: DeliveryView[];
}

export interface DeliveryView {
  targetId: string;
  targetPublicId: string | null;
  targetName: string | null;
  status: DeliveryStatus;
  attempts: AttemptEntry[];
  updatedAt: Date | null;
}

/** A row as Postgres returns it: the offset as text (bigint), targets as ids. */
type EventRowDb = Omit<EventView, 'logOffset' | 'deliveries'> & { logOffset: string; targetIds: string[] };

/**
 * The delivery records: what delivery saw and did, for GET …/events/{id}, sandbox
 * runs and the replay check of a new partition owner. Written only in batches
 * (src/delivery/delivery-records.ts), with synchronous_commit off: losing the last
 * fraction of a second of log on a database crash costs at most a duplicate
 * delivery on replay, never an event, so the log need not wait for fsync.
 */
export class DeliveryRecordRepo {
  constructor(private readonly sql: Sql) {}

  async writeBatch(events: readonly EventRowInput[], deliveries: readonly DeliveryRowInput[]): Promise<void> {
    if (events.length === 0 && deliveries.length === 0) return;
    // Each batch travels as ONE JSON document that Postgres unpacks
    // (json_to_recordset): one native JSON.stringify here instead of escaping
    // a dozen parameter arrays element by element, and the unpacking runs in
    // the database's process, off this event loop.
    const eventsJson = JSON.stringify(events.map((e) => ({
      e: e.eventId, w: e.workspaceId, q: e.queueName, et: e.eventType, gk: e.groupKey, pk: e.partitionKey,
      ik: e.idempotencyKey, ra: e.receivedAt, p: e.partition, o: e.offset.toString(), r: e.runId, t: e.targetIds,
    })));
    const deliveriesJson = JSON.stringify(deliveries.map((d) => ({
      t: d.targetId, s: d.status, a: encodeAttempts(d.attempts, d.receivedAt), st: streamKey(d.stream), p: d.partition, o: d.offset.toString(), ra: d.receivedAt,
    })));
    // Rows go in key order: two batches holding the same rows (threads or nodes
    // writing around a rebalance) then lock them in the same order and one waits
    // for the other, instead of each holding what the other needs (deadlock detected).
    // Key order is also time order for events: their primary key is appended to.
    await this.sql.begin(async (tx) => {
      await tx`SET LOCAL synchronous_commit = off`;
      if (events.length > 0) {
        await tx`
          INSERT INTO event_log (event_id, workspace_id, queue_name, event_type, group_key, partition_key,
                                 idempotency_key, received_at, log_partition, log_offset, run_id, target_ids)
          SELECT e, w, q, et, gk, pk, ik, to_timestamp(ra / 1000.0), p, o, r, t
          FROM json_to_recordset(${eventsJson}::text::json)
               AS x(e text, w bigint, q text, et text, gk text, pk text, ik text, ra double precision, p int, o bigint, r text, t bigint[])
          ORDER BY ra, e
          ON CONFLICT (event_id, received_at) DO NOTHING`;
      }
      if (deliveries.length > 0) {
        await tx`
          INSERT INTO delivery_log (received_at, log_offset, target_id, log_partition, log_stream, status, attempts)
          SELECT to_timestamp(ra / 1000.0), o, t, p, st, s, a
          FROM json_to_recordset(${deliveriesJson}::text::json)
               AS x(t bigint, s text, a text, st int, p int, o bigint, ra double precision)
          ORDER BY p, o, t
          ON CONFLICT (log_partition, log_offset, target_id, received_at) DO UPDATE
            SET status = EXCLUDED.status, log_stream = EXCLUDED.log_stream, updated_at = now(),
                -- Attempts append as text (src/storage/attempt-codec.ts).
                attempts = CASE WHEN delivery_log.attempts = '' THEN EXCLUDED.attempts
                                WHEN EXCLUDED.attempts = '' THEN delivery_log.attempts
                                ELSE delivery_log.attempts || ',' || EXCLUDED.attempts END`;
      }
    });
  }

  /** Highest offset of the partition the log knows a delivery of: replays past it need no check. */
  async highestOffset(stream: string, partition: number): Promise<bigint | null> {
    const [row] = await this.sql<{ o: string | null }[]>`
      SELECT max(log_offset)::text AS o FROM delivery_log WHERE log_partition = ${partition} AND log_stream = ${streamKey(stream)}`;
    return row?.o ? BigInt(row.o) : null;
  }

  /** Deliveries of records in [from, to] that are over (delivered, failed, blocked): not to be sent again. */
  async finishedBetween(stream: string, partition: number, from: bigint, to: bigint): Promise<Array<{ offset: bigint; targetId: string }>> {
    const rows = await this.sql<{ o: string; t: string }[]>`
      SELECT log_offset::text AS o, target_id::text AS t FROM delivery_log
      WHERE log_partition = ${partition} AND log_stream = ${streamKey(stream)}
        AND log_offset BETWEEN ${from.toString()}::bigint AND ${to.toString()}::bigint
        AND status IN ('delivered', 'failed', 'blocked')`;
    return rows.map((r) => ({ offset: BigInt(r.o), targetId: r.t }));
  }

  async event(workspaceId: string, eventId: string): Promise<EventView | null> {
    // The time the id carries is the row's received_at: one partition's primary
    // key (received_at, event_id) is probed. An id without one (only ids minted
    // before they carried it) is looked for in every partition.
    const mintedMs = eventIdTime(eventId);
    const [row] = await this.sql<EventRowDb[]>`
      SELECT event_id AS "eventId", queue_name AS "queueName", event_type AS "eventType", group_key AS "groupKey",
             partition_key AS "partitionKey", idempotency_key AS "idempotencyKey", received_at AS "receivedAt",
             run_id AS "runId", log_partition AS "logPartition", log_offset::text AS "logOffset", target_ids::text[] AS "targetIds"
      FROM event_log WHERE event_id = ${eventId} AND workspace_id = ${workspaceId}
        ${mintedMs === null ? this.sql`` : this.sql`AND received_at BETWEEN ${new Date(mintedMs - 1)} AND ${new Date(mintedMs + 1)}`}`;
    if (!row) return null;
    return (await this.withDeliveries([row]))[0]!;
  }

  /** The events of a sandbox run, oldest first. */
  async runEvents(workspaceId: string, runId: string, limit: number): Promise<EventView[]> {
    const rows = await this.sql<EventRowDb[]>`
      SELECT event_id AS "eventId", queue_name AS "queueName", event_type AS "eventType", group_key AS "groupKey",
             partition_key AS "partitionKey", idempotency_key AS "idempotencyKey", received_at AS "receivedAt",
             run_id AS "runId", log_partition AS "logPartition", log_offset::text AS "logOffset", target_ids::text[] AS "targetIds"
      FROM event_log WHERE workspace_id = ${workspaceId} AND run_id = ${runId}
      ORDER BY received_at, event_id LIMIT ${limit}`;
    return this.withDeliveries(rows);
  }

  /** Marks deliveries as pending again (a redelivery was requested): one statement for the whole batch. */
  async markPending(items: ReadonlyArray<{ targetId: string; partition: number; offset: bigint; receivedAt: string }>, stream: string): Promise<void> {
    if (items.length === 0) return;
    await this.sql`
      INSERT INTO delivery_log (received_at, log_offset, target_id, log_partition, log_stream, status)
      SELECT ra::timestamptz, o::bigint, t::bigint, p, ${streamKey(stream)}, 'pending'
      FROM unnest(${items.map((i) => i.targetId)}::text[], ${items.map((i) => i.partition)}::int[],
                  ${items.map((i) => i.offset.toString())}::text[], ${items.map((i) => i.receivedAt)}::text[]) AS u(t, p, o, ra)
      ON CONFLICT (log_partition, log_offset, target_id, received_at) DO UPDATE SET status = 'pending', updated_at = now()`;
  }

  private async withDeliveries(rows: EventRowDb[]): Promise<EventView[]> {
    if (rows.length === 0) return [];
    // A delivery is its event's by (log partition, offset) and receive time.
    const [from, to] = timeSpan(rows.map((r) => r.receivedAt));
    const stored = await this.sql<Array<Omit<DeliveryView, 'attempts'> & { p: number; o: string; at: Date; attempts: string }>>`
      SELECT d.log_partition AS p, d.log_offset::text AS o, d.received_at AS at,
             d.target_id::text AS "targetId", t.public_id AS "targetPublicId", t.name AS "targetName",
             d.status, d.attempts, d.updated_at AS "updatedAt"
      FROM unnest(${rows.map((r) => r.logPartition)}::int[], ${rows.map((r) => r.logOffset)}::bigint[]) AS k(p, o)
      JOIN delivery_log d ON d.log_partition = k.p AND d.log_offset = k.o
      LEFT JOIN targets t ON t.id = d.target_id
      WHERE d.received_at BETWEEN ${from} AND ${to}
      ORDER BY d.target_id`;
    const deliveries = stored.map(({ p, o, at, attempts, ...d }) => ({
      key: deliveryKey(p, o, at), ...d, attempts: decodeAttempts(attempts, at.getTime()),
    }));
    const routed = [...new Set(rows.flatMap((r) => r.targetIds))];
    const names = new Map(
      (await this.sql<{ id: string; publicId: string; name: string }[]>`
        SELECT id::text, public_id AS "publicId", name FROM targets WHERE id = ANY(${routed}::bigint[])`).map((t) => [t.id, t]),
    );
    return rows.map((r) => {
      const key = deliveryKey(r.logPartition, r.logOffset, r.receivedAt);
      const own: DeliveryView[] = deliveries.filter((d) => d.key === key).map(({ key: _k, ...d }) => d);
      // Routed targets without a row yet: consumed, not attempted yet.
      for (const targetId of r.targetIds) {
        if (own.some((d) => d.targetId === targetId)) continue;
        const t = names.get(targetId);
        own.push({ targetId, targetPublicId: t?.publicId ?? null, targetName: t?.name ?? null, status: 'pending', attempts: [], updatedAt: null });
      }
      return {
        eventId: r.eventId,
        queueName: r.queueName,
        eventType: r.eventType,
        groupKey: r.groupKey,
        partitionKey: r.partitionKey,
        idempotencyKey: r.idempotencyKey,
        receivedAt: r.receivedAt,
        runId: r.runId,
        logPartition: r.logPartition,
        logOffset: BigInt(r.logOffset),
        deliveries: own,
      };
    });
  }
}

/**
 * The receive times of some events, widened by a millisecond each way (a Date
 * holds milliseconds, the column microseconds): a condition on received_at
 * that limits a lookup of their deliveries to the partitions they are in.
 */
export function timeSpan(times: readonly Date[]): [Date, Date] {
  const ms = times.map((t) => t.getTime());
  return [new Date(Math.min(...ms) - 1), new Date(Math.max(...ms) + 1)];
}

/** Which event a delivery row belongs to: where the log holds it and when it was received. */
export function deliveryKey(partition: number, offset: string | bigint, receivedAt: Date): string {
  return `${partition}|${offset}|${receivedAt.getTime()}`;
}

/**
 * delivery_log.log_stream: '<consumer group>/<topic>' as the first 4 bytes of
 * its MD5, a signed int (what migration 070 computes for existing rows): 4
 * bytes a row instead of the name, compared on rows already found by
 * partition and offset, so a collision would have to coincide with those too.
 */
export function streamKey(stream: string): number {
  return createHash('md5').update(stream).digest().readInt32BE(0);
}
