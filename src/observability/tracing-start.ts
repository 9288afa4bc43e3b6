import type { Logger } from './logger.js';
import { NO_TRACING, type Tracing, type TracingOptions } from './tracing.js';

/** True when the environment asks for OTLP traces (the standard OpenTelemetry SDK variables). */
export function otlpConfigured(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * Starts tracing when an exporter is given or the environment configures OTLP;
 * NO_TRACING otherwise, without loading the OpenTelemetry SDK at all.
 */
export async function startTracing(log: Logger, options: TracingOptions = {}): Promise<Tracing> {
  const env = options.env ?? process.env;
  if (!options.exporter && !otlpConfigured(env)) return NO_TRACING;
  const { sdkTracing } = await import('./tracing-sdk.js');
  return sdkTracing(log, options, env);
}
