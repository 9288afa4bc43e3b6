import { SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';

/** How a node starts its tracing (NodeOptions.tracing). */
export interface TracingOptions {
  /** Where the OTEL_* variables are read (process.env by default). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Spans go to this exporter instead of OTLP, and tracing is on whatever the
   * environment says (tests pass an InMemorySpanExporter).
   */
  exporter?: SpanExporter;
  /** 'simple' exports each span as it ends (a test reads them at once); 'batch' by default. */
  processor?: 'batch' | 'simple';
}

/**
 * This node's tracing. With no exporter configured it is disabled (NO_TRACING):
 * `enabled` is false, every method is a no-op, and callers on the hot path
 * check `enabled` before building anything (names, attributes, headers). On,
 * it is src/observability/tracing-sdk.ts, loaded only then
 * (src/observability/tracing-start.ts).
 *
 * No global provider or context manager is registered: contexts are passed
 * explicitly (a request's span is found from its exchange, an attempt's parent
 * from the traceparent stored in the event record). That keeps the process
 * free of AsyncLocalStorage's per-promise cost even with tracing on, and lets
 * several nodes in one test process each keep their own provider.
 */
export interface Tracing {
  readonly enabled: boolean;
  /**
   * Starts the server span of a request under `request` (its exchange), as a
   * child of the sender's traceparent when one is valid, else as a new trace.
   */
  startRequest(request: object, name: string, traceparent: string | null, tracestate: string | null, attributes: Attributes): Span | null;
  /** The server span started for `request`, if any. */
  requestSpan(request: object): Span | undefined;
  /** A child span of `request`'s server span (a step such as auth or append). */
  startStep(request: object, name: string): Span | null;
  /** Runs one step of a traced request in a child span (call only when `enabled`: it allocates). */
  step<T>(request: object, name: string, run: () => Promise<T>): Promise<T>;
  /** A delivery attempt's span, the child of the context stored with the event (a new trace when there is none). */
  startAttempt(storedTraceparent: string | undefined, storedTracestate: string | undefined, attributes: Attributes): Span | null;
  /** Exports what is buffered and stops the provider. */
  stop(): Promise<void>;
}

/** Tracing off: the state of every node whose environment names no OTLP endpoint. */
export const NO_TRACING: Tracing = {
  enabled: false,
  startRequest: () => null,
  requestSpan: () => undefined,
  startStep: () => null,
  step: (_request, _name, run) => run(),
  startAttempt: () => null,
  stop: () => Promise.resolve(),
};

/** Ends `span` with the HTTP status it answered (error status from 500 on for a server, from 400 for a client). */
export function endWithStatus(span: Span, status: number, errorFrom: number): void {
  if (status > 0) span.setAttribute('http.response.status_code', status);
  if (status >= errorFrom || status === 0) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

