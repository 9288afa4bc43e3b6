import { ServiceError, type FieldProblem } from '../../errors.js';
import type { DeliveryStatus } from '../../storage/delivery-record-repo.js';
import type { EventListPosition } from '../../storage/event-list-repo.js';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'retrying', 'failed', 'blocked'];
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 100;

const PARAMS = ['status', 'target', 'from', 'to', 'eventType', 'partitionKey', 'limit', 'cursor'] as const;
/** The cursor's time as Postgres prints it (to_char … .US"Z"), and an event id. */
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const EVENT_ID = /^evt_[A-Za-z0-9_-]{8,64}$/;
/** Keys are at most 255 bytes at ingress (docs/api.md#configuration-api); a longer filter cannot match anything. */
const MAX_FILTER = 1024;

/** The query of `GET /v1/tenants/{t}/queues/{name}/events`, checked. */
export interface EventListQuery {
  status?: DeliveryStatus;
  /** A target name of the workspace (resolved by the caller). */
  target?: string;
  from?: Date;
  to?: Date;
  eventType?: string;
  partitionKey?: string;
  limit: number;
  after?: EventListPosition;
}

/**
 * Reads the query string: every bad parameter is named in one
 * validation_failed (unknown or repeated parameters too, so a typo is not
 * silently an unfiltered list).
 */
export function readEventListQuery(query: string): EventListQuery {
  const params = new URLSearchParams(query);
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!(PARAMS as readonly string[]).includes(name)) problems.push({ field: name, problem: 'unknown parameter' });
    else if (seen.has(name)) problems.push({ field: name, problem: 'given more than once' });
    seen.add(name);
  }
  const out: EventListQuery = { limit: DEFAULT_PAGE };
  const status = params.get('status');
  if (status !== null) {
    if ((DELIVERY_STATUSES as readonly string[]).includes(status)) out.status = status as DeliveryStatus;
    else problems.push({ field: 'status', problem: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
  }
  for (const field of ['target', 'eventType', 'partitionKey'] as const) {
    const v = params.get(field);
    if (v === null) continue;
    if (v.length === 0 || v.length > MAX_FILTER) problems.push({ field, problem: `must be 1-${MAX_FILTER} characters` });
    else out[field] = v;
  }
  for (const field of ['from', 'to'] as const) {
    const v = params.get(field);
    if (v === null) continue;
    const at = parseIsoTime(v);
    if (at === null) problems.push({ field, problem: 'must be an ISO-8601 time such as 2026-01-31T12:00:00Z' });
    else out[field] = at;
  }
  if (out.from && out.to && out.from.getTime() >= out.to.getTime()) problems.push({ field: 'to', problem: 'must be later than from' });
  const limit = params.get('limit');
  if (limit !== null) {
    const n = /^\d{1,3}$/.test(limit) ? Number(limit) : NaN;
    if (n >= 1 && n <= MAX_PAGE) out.limit = n;
    else problems.push({ field: 'limit', problem: `must be an integer from 1 to ${MAX_PAGE}` });
  }
  const cursor = params.get('cursor');
  if (cursor !== null) {
    const position = decodeCursor(cursor);
    if (position === null) problems.push({ field: 'cursor', problem: 'is not a cursor this API returned (pass nextCursor as it is)' });
    else out.after = position;
  }
  if (problems.length > 0) {
    throw new ServiceError('validation_failed', `The request is not valid: ${problems.map((p) => `${p.field} ${p.problem}`).join('; ')}.`, problems);
  }
  return out;
}

/**
 * ISO-8601 with a date, a time and a zone (Z or ±hh:mm); null otherwise.
 * Date.parse alone would take "2026" or a local time without a zone.
 */
export function parseIsoTime(v: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/** The opaque cursor: base64url of the position's JSON. Opaque to clients, not secret. */
export function encodeCursor(p: EventListPosition): string {
  return Buffer.from(JSON.stringify([p.receivedAt, p.eventId])).toString('base64url');
}

export function decodeCursor(cursor: string): EventListPosition | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 2) return null;
  const [receivedAt, eventId] = v as unknown[];
  if (typeof receivedAt !== 'string' || !CURSOR_TIME.test(receivedAt) || Number.isNaN(Date.parse(receivedAt))) return null;
  if (typeof eventId !== 'string' || !EVENT_ID.test(eventId)) return null;
  return { receivedAt, eventId };
}
