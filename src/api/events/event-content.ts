import type { EventRecord } from '../../event-log/event-record.js';

/**
 * What the event page shows of an event beyond its keys: the headers the
 * record keeps (the ones delivery sends on from ingress: content type, mapped
 * headers, the hop path, trace context) and the body, base64 so any bytes
 * survive JSON. Read back from the event log (the delivery records holds no body),
 * so an event past the log's retention shows `retained: false` and no body.
 */
export interface EventContent {
  retained: boolean;
  contentType: string | null;
  headers: Array<[name: string, value: string]>;
  bodyBytes: number | null;
  bodyBase64: string | null;
}

export function eventContent(record: EventRecord | null): EventContent {
  if (!record) return { retained: false, contentType: null, headers: [], bodyBytes: null, bodyBase64: null };
  const headers: Array<[string, string]> = [];
  if (record.contentType !== null) headers.push(['content-type', record.contentType]);
  if (record.eventType !== null) headers.push(['x-service-event-type', record.eventType]);
  if (record.idempotencyKey !== null) headers.push(['idempotency-key', record.idempotencyKey]);
  if (record.path !== null) headers.push(['x-service-path', record.path]);
  for (const [name, value] of record.mappedHeaders ?? []) headers.push([name, value]);
  if (record.traceparent !== undefined) headers.push(['traceparent', record.traceparent]);
  if (record.tracestate !== undefined) headers.push(['tracestate', record.tracestate]);
  return { retained: true, contentType: record.contentType, headers, bodyBytes: record.body.length, bodyBase64: record.body.toString('base64') };
}
