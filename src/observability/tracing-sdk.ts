import { hostname } from 'node:os';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { isServiceError } from '../errors.js';
import type { Logger } from './logger.js';
import { spanContextOf } from './trace-context.js';
import { batchOptionsFromEnv, samplerFromEnv, type EnvProblem } from './tracing-env.js';
import type { Tracing, TracingOptions } from './tracing.js';

/**
 * Tracing on: spans through an OpenTelemetry SDK 3 provider (src/observability/tracing.ts
 * says how contexts travel). This module is loaded only then
 * (src/observability/tracing-start.ts): the SDK, its OTLP exporter and what they
 * pull in are ~5 MB of live heap that every full collection of a node without
 * tracing would otherwise walk.
 */
export class SdkTracing implements Tracing {
  readonly enabled = true;
  private readonly tracer: Tracer;
  /** The server span of each traced request, keyed by its exchange. */
  private readonly requestSpans = new WeakMap<object, Span>();

  private readonly provider: TracerProvider;
  constructor(provider: TracerProvider) {
    this.provider = provider;
    this.tracer = provider.getTracer('streamgate', '0.1.0');
  }

  /**
   * Starts the server span of a request under `request` (its exchange), as a
   * child of the sender's traceparent when one is valid, else as a new trace.
   */
  startRequest(request: object, name: string, traceparent: string | null, tracestate: string | null, attributes: Attributes): Span {
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
    if (!parent) return null;
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
  startAttempt(storedTraceparent: string | undefined, storedTracestate: string | undefined, attributes: Attributes): Span {
    return this.tracer.startSpan('delivery attempt', { kind: SpanKind.CLIENT, attributes }, remoteParent(storedTraceparent ?? null, storedTracestate ?? null));
  }

  /** Exports what is buffered and stops the provider. */
  async stop(): Promise<void> {
    await this.provider.forceFlush().catch(() => {});
    await this.provider.shutdown().catch(() => {});
  }
}

/** A provider with the configured exporter, sampler and resource. */
export async function sdkTracing(log: Logger, options: TracingOptions, env: Readonly<Record<string, string | undefined>>): Promise<Tracing> {
  // The exporter reads its URL, headers and timeout from the OTEL_EXPORTER_OTLP_* variables itself.
  const exporter = options.exporter ?? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
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
  return new SdkTracing(provider);
}

function remoteParent(traceparent: string | null, tracestate: string | null): Context {
  if (traceparent === null) return ROOT_CONTEXT;
  const ctx = spanContextOf(traceparent);
  if (tracestate !== null) ctx.traceState = new TraceState(tracestate);
  return trace.setSpanContext(ROOT_CONTEXT, ctx);
}
