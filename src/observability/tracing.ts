import { hostname } from 'node:os';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { isServiceError } from '../errors.js';
import type { Logger } from './logger.js';
import { spanContextOf } from './trace-context.js';
import { batchOptionsFromEnv, samplerFromEnv, type EnvProblem } from './tracing-env.js';

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

/** True when the environment asks for OTLP traces (the standard OpenTelemetry SDK variables). */
export function otlpConfigured(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * This node's tracing. With no exporter configured it is disabled: `enabled`
 * is false, every method is a no-op, and callers on the hot path check
 * `enabled` before building anything (names, attributes, headers).
 *
 * No global provider or context manager is registered: contexts are passed
 * explicitly (a request's span is found from its exchange, an attempt's parent
 * from the traceparent stored in the event record). That keeps the process
 * free of AsyncLocalStorage's per-promise cost even with tracing on, and lets
 * several nodes in one test process each keep their own provider.
 */
export class Tracing {
  readonly enabled: boolean;
  private readonly tracer: Tracer | null;
  /** The server span of each traced request, keyed by its exchange. */
  private readonly requestSpans = new WeakMap<object, Span>();

  private readonly provider: TracerProvider | null;
  constructor(provider: TracerProvider | null) {
    this.provider = provider;
    this.enabled = provider !== null;
    this.tracer = provider?.getTracer('streamgate', '0.1.0') ?? null;
  }

  /**
   * Starts the server span of a request under `request` (its exchange), as a
   * child of the sender's traceparent when one is valid, else as a new trace.
   */
  startRequest(request: object, name: string, traceparent: string | null, tracestate: string | null, attributes: Attributes): Span | null {
    if (!this.tracer) return null;
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, remoteParent(traceparent, tracestate));
    this.requestSpans.set(request, span);
    return span;
  }

  /** The server span started for `request`, if any. */
  requestSpan(request: object): Span | undefined {
    return this.requestSpans.get(request);
  }

  /** A child span of `request`'s server span (a step such as auth or append). */
  startStep(request: object, name: string): Span | null {
    const parent = this.requestSpans.get(request);
    if (!this.tracer || !parent) return null;
    return this.tracer.startSpan(name, { kind: SpanKind.INTERNAL }, trace.setSpan(ROOT_CONTEXT, parent));
  }

  /** Runs one step of a traced request in a child span (call only when `enabled`: it allocates). */
  async step<T>(request: object, name: string, run: () => Promise<T>): Promise<T> {
    const span = this.startStep(request, name);
    try {
      return await run();
    } catch (err) {
      span?.setStatus({ code: SpanStatusCode.ERROR, message: isServiceError(err) ? err.code : 'internal' });
      throw err;
    } finally {
      span?.end();
    }
  }

  /** A delivery attempt's span, the child of the context stored with the event (a new trace when there is none). */
  startAttempt(storedTraceparent: string | undefined, storedTracestate: string | undefined, attributes: Attributes): Span | null {
    if (!this.tracer) return null;
    return this.tracer.startSpan('delivery attempt', { kind: SpanKind.CLIENT, attributes }, remoteParent(storedTraceparent ?? null, storedTracestate ?? null));
  }

  /** Exports what is buffered and stops the provider. */
  async stop(): Promise<void> {
    if (!this.provider) return;
    await this.provider.forceFlush().catch(() => {});
    await this.provider.shutdown().catch(() => {});
  }
}

/** Tracing off: the state of every node whose environment names no OTLP endpoint. */
export const NO_TRACING = new Tracing(null);

/** Starts tracing when an exporter is given or the environment configures OTLP; NO_TRACING otherwise. */
export function startTracing(log: Logger, options: TracingOptions = {}): Tracing {
  const env = options.env ?? process.env;
  if (!options.exporter && !otlpConfigured(env)) return NO_TRACING;
  // The exporter reads its URL, headers and timeout from the OTEL_EXPORTER_OTLP_* variables itself.
  const exporter = options.exporter ?? new OTLPTraceExporter();
  const defaults = resourceFromAttributes({
    'service.name': 'streamgate',
    'service.version': '0.1.0',
    'service.instance.id': `${hostname()}:${process.pid}`,
  });
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults.
  const resource = defaults.merge(detectResources({ detectors: [envDetector] }));
  // SDK 3 no longer reads OTEL_TRACES_SAMPLER and OTEL_BSP_* itself (tracing-env.ts).
  const problems: EnvProblem[] = [];
  const sampler = samplerFromEnv(env, problems);
  const processor = options.processor === 'simple' ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter, ...batchOptionsFromEnv(env, problems) });
  for (const problem of problems) log.warn(problem);
  // SDK 3's TracerProvider (2.x's BasicTracerProvider): like it, it registers nothing globally.
  const provider = new TracerProvider({ resource, sampler, spanProcessors: [processor] });
  log.info({ exporter: options.exporter ? 'injected' : 'otlp' }, 'tracing enabled');
  return new Tracing(provider);
}

/** Ends `span` with the HTTP status it answered (error status from 500 on for a server, from 400 for a client). */
export function endWithStatus(span: Span, status: number, errorFrom: number): void {
  if (status > 0) span.setAttribute('http.response.status_code', status);
  if (status >= errorFrom || status === 0) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

function remoteParent(traceparent: string | null, tracestate: string | null): Context {
  if (traceparent === null) return ROOT_CONTEXT;
  const ctx = spanContextOf(traceparent);
  if (tracestate !== null) ctx.traceState = new TraceState(tracestate);
  return trace.setSpanContext(ROOT_CONTEXT, ctx);
}
