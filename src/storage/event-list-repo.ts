import type postgres from 'postgres';
import type { Sql } from './db.js';
import { deliveryKey, timeSpan, type DeliveryStatus } from './delivery-record-repo.js';
import { decodeAttempts } from './attempt-codec.js';

/** Where a page starts: after this (receivedAt, eventId), newest first. */
export interface EventListPosition {
  /** ISO-8601 UTC with microseconds, as Postgres stores the time (a JS Date would round it). */
  receivedAt: string;
  eventId: string;
}

/** The filters of `GET …/queues/{name}/events`; all given ones must hold (AND). */
export interface EventListFilter {
  workspaceId: string;
  queueName: string;
  status?: DeliveryStatus;
  /** Internal id of a target of the workspace. */
  targetId?: string;
  from?: Date;
  to?: Date;
  eventType?: string;
  partitionKey?: string;
  after?: EventListPosition;
  limit: number;
}

export interface EventListDelivery {
  targetId: string;
  target: string;
  status: DeliveryStatus;
  attempts: number;
  lastAttemptAt: string | null;
  lastStatus: number | null;
}

export interface EventListItem {
  eventId: string;
  receivedAt: Date;
  position: EventListPosition;
  eventType: string | null;
  partitionKey: string | null;
  targets: EventListDelivery[];
}

interface Row {
  eventId: string;
  receivedAt: Date;
  logPartition: number;
  logOffset: string;
  cursorAt: string;
  eventType: string | null;
  partitionKey: string | null;
  targetIds: string[];
}

/**
 * The events of a queue as delivery recorded them (event_log, delivery_log),
 * newest first, by keyset on (received_at, event_id): a page stays the same
 * whatever is inserted before it, and the cost of a page does not grow with
 * the queue (index event_log_queue_idx, migrations 040 and 070). A delivery
 * is found by its event's log partition, offset and received_at, so only that
 * time's partition is probed.
 *
 * A delivery without a row in delivery_log is `pending` (consumed, not
 * attempted yet). Deliveries to targets deleted since are left out.
 */
export class EventListRepo {
  constructor(private readonly sql: Sql) {}

  /** Up to `limit` events, and whether more follow. */
  async page(f: EventListFilter): Promise<{ items: EventListItem[]; more: boolean }> {
    const sql = this.sql;
    const none = sql``;
    const rows = await sql<Row[]>`
      SELECT e.event_id AS "eventId", e.received_at AS "receivedAt", e.log_partition AS "logPartition", e.log_offset::text AS "logOffset",
             to_char(e.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "cursorAt",
             e.event_type AS "eventType", e.partition_key AS "partitionKey", e.target_ids::text[] AS "targetIds"
      FROM event_log e
      WHERE e.workspace_id = ${f.workspaceId} AND e.queue_name = ${f.queueName}
        ${f.from ? sql`AND e.received_at >= ${f.from}` : none}
        ${f.to ? sql`AND e.received_at < ${f.to}` : none}
        ${f.eventType !== undefined ? sql`AND e.event_type = ${f.eventType}` : none}
        ${f.partitionKey !== undefined ? sql`AND e.partition_key = ${f.partitionKey}` : none}
        ${f.targetId !== undefined ? sql`AND ${f.targetId}::bigint = ANY(e.target_ids)` : none}
        ${f.status !== undefined ? this.statusFilter(f.status, f.targetId) : none}
        ${f.after ? sql`AND (e.received_at, e.event_id) < (${f.after.receivedAt}::timestamptz, ${f.after.eventId})` : none}
      ORDER BY e.received_at DESC, e.event_id DESC
      LIMIT ${f.limit + 1}`;
    const more = rows.length > f.limit;
    const page = rows.slice(0, f.limit);
    return { items: await this.withDeliveries(f.workspaceId, page), more };
  }

  /** An event matches when the target (or, without one, any existing target it was routed to) has that status. */
  private statusFilter(status: DeliveryStatus, targetId: string | undefined): postgres.PendingQuery<postgres.Row[]> {
    const sql = this.sql;
    if (targetId !== undefined) {
      const stored = sql`EXISTS (SELECT 1 FROM delivery_log d WHERE d.log_partition = e.log_partition AND d.log_offset = e.log_offset AND d.received_at = e.received_at AND d.target_id = ${targetId}::bigint AND d.status = ${status})`;
      if (status !== 'pending') return sql`AND ${stored}`;
      return sql`AND (${stored} OR NOT EXISTS (SELECT 1 FROM delivery_log d WHERE d.log_partition = e.log_partition AND d.log_offset = e.log_offset AND d.received_at = e.received_at AND d.target_id = ${targetId}::bigint))`;
    }
    const stored = sql`EXISTS (SELECT 1 FROM delivery_log d JOIN targets t ON t.id = d.target_id WHERE d.log_partition = e.log_partition AND d.log_offset = e.log_offset AND d.received_at = e.received_at AND d.status = ${status})`;
    if (status !== 'pending') return sql`AND ${stored}`;
    return sql`AND (${stored} OR EXISTS (
      SELECT 1 FROM unnest(e.target_ids) AS r(id) JOIN targets t ON t.id = r.id
      WHERE NOT EXISTS (SELECT 1 FROM delivery_log d WHERE d.log_partition = e.log_partition AND d.log_offset = e.log_offset AND d.received_at = e.received_at AND d.target_id = r.id)))`;
  }

  private async withDeliveries(workspaceId: string, rows: Row[]): Promise<EventListItem[]> {
    if (rows.length === 0) return [];
    const [from, to] = timeSpan(rows.map((r) => r.receivedAt));
    // Counts and the last attempt only: a page never carries the attempts themselves.
    const found = await this.sql<Array<{ p: number; o: string; at: Date; targetId: string; status: DeliveryStatus; attempts: string }>>`
      SELECT d.log_partition AS p, d.log_offset::text AS o, d.received_at AS at, d.target_id::text AS "targetId", d.status, d.attempts
      FROM unnest(${rows.map((r) => r.logPartition)}::int[], ${rows.map((r) => r.logOffset)}::bigint[]) AS k(p, o)
      JOIN delivery_log d ON d.log_partition = k.p AND d.log_offset = k.o
      WHERE d.received_at BETWEEN ${from} AND ${to}`;
    const stored = found.map(({ p, o, at, attempts, ...d }) => {
      const list = decodeAttempts(attempts, at.getTime());
      const last = list[list.length - 1];
      return { eventKey: deliveryKey(p, o, at), ...d, attempts: list.length, lastAttemptAt: last?.at ?? null, lastStatus: last?.status ?? null };
    });
    const targetIds = [...new Set([...rows.flatMap((r) => r.targetIds), ...stored.map((d) => d.targetId)])];
    const names = new Map(
      (await this.sql<{ id: string; name: string }[]>`
        SELECT id::text, name FROM targets WHERE workspace_id = ${workspaceId} AND id = ANY(${targetIds}::bigint[])`).map((t) => [t.id, t.name]),
    );
    const byEvent = new Map<string, Array<Omit<EventListDelivery, 'target'>>>();
    for (const { eventKey, ...d } of stored) {
      const list = byEvent.get(eventKey) ?? [];
      list.push(d);
      byEvent.set(eventKey, list);
    }
    return rows.map((r) => {
      const own = byEvent.get(deliveryKey(r.logPartition, r.logOffset, r.receivedAt)) ?? [];
      const seen = new Set(own.map((d) => d.targetId));
      const all = [
        ...own,
        ...r.targetIds.filter((id) => !seen.has(id)).map((targetId) => ({
          targetId, status: 'pending' as const, attempts: 0, lastAttemptAt: null, lastStatus: null,
        })),
      ];
      const targets = all
        .filter((d) => names.has(d.targetId))
        .map((d) => ({ ...d, target: names.get(d.targetId)! }))
        .sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
      return {
        eventId: r.eventId,
        receivedAt: r.receivedAt,
        position: { receivedAt: r.cursorAt, eventId: r.eventId },
        eventType: r.eventType,
        partitionKey: r.partitionKey,
        targets,
      };
    });
  }
}
