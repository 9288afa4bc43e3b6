import { TraceFlags, type SpanContext } from '@opentelemetry/api';

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/), version 00 only:
 *
 *   traceparent: 00-<trace-id: 32 lowercase hex>-<parent-id: 16 lowercase hex>-<flags: 2 lowercase hex>
 *                    neither id all zeros; exactly 55 characters (a repeated header, joined
 *                    with ", ", is longer and so refused, as the spec asks)
 *   tracestate:  vendor list, kept only beside a valid traceparent, forwarded as it came
 *
 * A header that does not parse is ignored, never a refusal: tracing is the
 * sender's business, the event is not.
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';
/** The spec's limit is 32 list members; 512 characters is what it says a participant must propagate. */
const TRACESTATE_MAX = 512;
/** Printable ASCII without controls (list members hold no other bytes). */
const TRACESTATE = /^[\x20-\x7e]*$/;

/** The traceparent as received when it is a valid version-00 header, else null. */
export function validTraceparent(value: string | undefined): string | null {
  if (value === undefined || value.length !== 55) return null;
  const m = TRACEPARENT.exec(value);
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return null;
  return value;
}

/** The tracestate to carry beside a valid traceparent, or null (absent, empty, too long or not printable). */
export function validTracestate(value: string | undefined): string | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > TRACESTATE_MAX || !TRACESTATE.test(trimmed)) return null;
  return trimmed;
}

/** A remote span context from a traceparent already validated (validTraceparent). */
export function spanContextOf(traceparent: string): SpanContext {
  return {
    traceId: traceparent.slice(3, 35),
    spanId: traceparent.slice(36, 52),
    traceFlags: parseInt(traceparent.slice(53, 55), 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
}

/** The traceparent header naming `ctx` as the parent. */
export function formatTraceparent(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
}
