import type { Exchange } from '../http/exchange.js';
import type { EventRecord } from '../event-log/event-record.js';
import { formatTraceparent, validTraceparent, validTracestate } from '../observability/trace-context.js';
import type { Tracing } from '../observability/tracing.js';

/**
 * Stores the trace context the event's deliveries continue (reference: W3C
 * Trace Context). Call only when tracing is on or the request has a
 * traceparent header: requests without one pay a property read.
 *
 * - tracing off: the sender's traceparent and tracestate, unchanged when valid;
 *   an invalid traceparent is dropped (with its tracestate), not forwarded.
 * - tracing on: the ingress span's context, a child of the sender's when valid,
 *   else of a new trace; the sender's tracestate rides along.
 */
export function attachTraceContext(record: EventRecord, exchange: Exchange, tracing: Tracing): void {
  const headers = exchange.headers;
  const sent = validTraceparent(headers.traceparent);
  const span = tracing.enabled ? tracing.requestSpan(exchange) : undefined;
  const traceparent = span ? formatTraceparent(span.spanContext()) : sent;
  if (traceparent === null) return;
  record.traceparent = traceparent;
  const tracestate = sent === null ? null : validTracestate(headers.tracestate);
  if (tracestate !== null) record.tracestate = tracestate;
}
