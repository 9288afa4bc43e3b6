import type postgres from 'postgres';
import type { Sql } from './db.js';
import { decodeAttempts } from './attempt-codec.js';
import { decodeDeliveries, linePattern, type DeliveryStatus } from './delivery-state-codec.js';

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
  cursorAt: string;
  eventType: string | null;
  partitionKey: string | null;
  deliveries: string;
}

/**
 * The events of a queue as delivery recorded them (event_log, its deliveries
 * inside each row, migration 090), newest first, by keyset on (received_at,
 * event_id): a page stays the same whatever is inserted before it, and the
 * cost of a page does not grow with the queue (index event_log_queue_idx).
 * A status other than delivered reads event_log_open_idx, which holds only
 * the events with a delivery not delivered.
 *
 * A delivery routed but not attempted yet is `pending`. Deliveries to targets
 * deleted since are left out.
 */
export class EventListRepo {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Up to `limit` events, and whether more follow. */
  async page(f: EventListFilter): Promise<{ items: EventListItem[]; more: boolean }> {
    const sql = this.sql;
    const none = sql``;
    const rows = await sql<Row[]>`
      SELECT e.event_id AS "eventId", e.received_at AS "receivedAt",
             to_char(e.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "cursorAt",
             e.event_type AS "eventType", e.partition_key AS "partitionKey", e.deliveries
      FROM event_log e
      WHERE e.workspace_id = ${f.workspaceId} AND e.queue_name = ${f.queueName}
        ${f.from ? sql`AND e.received_at >= ${f.from}` : none}
        ${f.to ? sql`AND e.received_at < ${f.to}` : none}
        ${f.eventType !== undefined ? sql`AND e.event_type = ${f.eventType}` : none}
        ${f.partitionKey !== undefined ? sql`AND e.partition_key = ${f.partitionKey}` : none}
        ${f.targetId !== undefined && f.status === undefined ? sql`AND e.deliveries ~ ${linePattern(f.targetId, null)}` : none}
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
    // Spelled as the partial index's predicate, so the planner can use it.
    const open = status === 'delivered' ? sql`` : sql`AND event_deliveries_open(e.deliveries)`;
    if (targetId !== undefined) return sql`${open} AND e.deliveries ~ ${linePattern(targetId, status)}`;
    return sql`${open} AND EXISTS (
      SELECT 1 FROM regexp_matches(e.deliveries, ${linePattern(null, status, 'target')}, 'g') AS m(x)
      JOIN targets t ON t.id = m.x[1]::bigint)`;
  }

  private async withDeliveries(workspaceId: string, rows: Row[]): Promise<EventListItem[]> {
    if (rows.length === 0) return [];
    const stored = rows.map((r) => decodeDeliveries(r.deliveries));
    const targetIds = [...new Set(stored.flatMap((list) => list.map((d) => d.targetId)))];
    const names = new Map(
      (await this.sql<{ id: string; name: string }[]>`
        SELECT id::text, name FROM targets WHERE workspace_id = ${workspaceId} AND id = ANY(${targetIds}::bigint[])`).map((t) => [t.id, t.name]),
    );
    return rows.map((r, i) => {
      const at = r.receivedAt.getTime();
      // Counts and the last attempt only: a page never carries the attempts themselves.
      const targets = stored[i]!
        .filter((d) => names.has(d.targetId))
        .map((d) => {
          const list = decodeAttempts(d.attempts, at);
          const last = list[list.length - 1];
          return {
            targetId: d.targetId,
            target: names.get(d.targetId)!,
            status: d.status,
            attempts: list.length,
            lastAttemptAt: last?.at ?? null,
            lastStatus: last?.status ?? null,
          };
        })
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
