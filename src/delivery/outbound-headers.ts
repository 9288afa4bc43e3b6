import type { EventRecord } from '../log/event-record.js';
import type { RouteTarget } from '../routing/route-table.js';

/** This service's hop segment for the queue an event came through (contract §4). */
export function pathSegment(record: EventRecord): string {
  return `sg:${record.tenantPublicId}/${record.queueName}`;
}

/**
 * The headers of one delivery request. Precedence, lowest first (reference §6
 * rule 1): the service's own headers, then the target's static headers.
 */
export function outboundHeaders(record: EventRecord, target: RouteTarget): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': record.contentType ?? 'application/octet-stream',
    'user-agent': 'streamgate/0.1',
    'x-service-event-id': record.id,
    'x-service-path': record.path ? `${record.path},${pathSegment(record)}` : pathSegment(record),
  };
  if (record.idempotencyKey !== null) headers['idempotency-key'] = record.idempotencyKey;
  if (record.eventType !== null) headers['x-service-event-type'] = record.eventType;
  for (const [name, value] of Object.entries(target.settings.staticHeaders)) headers[name.toLowerCase()] = value;
  const auth = target.settings.auth;
  if (auth.mode === 'bearer') headers.authorization = `Bearer ${auth.token}`;
  else if (auth.mode === 'basic') headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return headers;
}
