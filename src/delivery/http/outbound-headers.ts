import type { EventRecord } from '../../event-log/event-record.js';
import { forwardedHeaderProblem, isHeaderValue } from '../../routing/header-rules.js';
import type { TargetSettings } from '../../routing/target-settings.js';

/** This service's hop segment for the queue an event came through (docs/api.md#configuration-api). */
export function pathSegment(record: EventRecord): string {
  return `sg:${record.tenantPublicId}/${record.queueName}`;
}

/**
 * The headers of a delivery request that are the same on every attempt, in
 * the precedence of docs/api.md#ingress, lowest first (a later layer wins a
 * name collision; the configuration API refuses collisions at save):
 *
 *   1. mapped headers (snapshotted at accept) and the group key header
 *   2. the service's own: Content-Type, X-Service-Event-Id, X-Service-Path, Idempotency-Key,
 *      traceparent/tracestate, …
 *   3. the target's static headers
 *
 * Auth and signing (src/delivery/deliverer.ts) are added per attempt, on top.
 * Header names are lower-cased so later layers replace earlier ones.
 */
export function outboundHeaders(record: EventRecord, settings: Pick<TargetSettings, 'staticHeaders' | 'groupKeyHeader'>): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': 'streamgate/0.1' };
  // Names the reference never forwards are dropped even if older configuration let them in.
  for (const [name, value] of record.mappedHeaders ?? []) {
    if (forwardedHeaderProblem(name, false) === null && isHeaderValue(value)) headers[name.toLowerCase()] = value;
  }
  const gk = settings.groupKeyHeader;
  if (gk && record.groupKey !== null && forwardedHeaderProblem(gk, false) === null && isHeaderValue(record.groupKey)) {
    headers[gk.toLowerCase()] = record.groupKey;
  }

  headers['content-type'] = record.contentType ?? 'application/octet-stream';
  headers['x-service-event-id'] = record.id;
  headers['x-service-path'] = record.path ? `${record.path},${pathSegment(record)}` : pathSegment(record);
  if (record.idempotencyKey !== null) headers['idempotency-key'] = record.idempotencyKey;
  if (record.eventType !== null) headers['x-service-event-type'] = record.eventType;
  // The sender's trace continues at the receiver (W3C Trace Context); with
  // tracing on, the deliverer names the attempt's span as the parent instead.
  if (record.traceparent !== undefined) {
    headers.traceparent = record.traceparent;
    if (record.tracestate !== undefined) headers.tracestate = record.tracestate;
  }

  for (const [name, value] of Object.entries(settings.staticHeaders)) headers[name.toLowerCase()] = value;
  return headers;
}
