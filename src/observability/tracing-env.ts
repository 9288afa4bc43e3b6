import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type BatchSpanProcessorOptions, type Sampler } from '@opentelemetry/sdk-trace';

/**
 * The OTEL_TRACES_SAMPLER and OTEL_BSP_* variables of the OpenTelemetry
 * specification. SDK 2.x read them inside its tracer provider and batch
 * processor; SDK 3's @opentelemetry/sdk-trace takes only what it is given
 * (environment configuration moved to the sdk-node / declarative config
 * packages, which streamgate does not use), so they are read here, and a node
 * configured for 2.x samples and batches as before. The exporter
 * (OTEL_EXPORTER_OTLP_*) and the resource detector (OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES) still read their own.
 */

type Env = Readonly<Record<string, string | undefined>>;

/** What was wrong with a variable; the caller logs it and the default applies. */
export type EnvProblem = string;

/** Parent-based always-on unless OTEL_TRACES_SAMPLER names another (the specification's default). */
export function samplerFromEnv(env: Env, problems: EnvProblem[] = []): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratioFromEnv(env, problems));
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratioFromEnv(env, problems)) });
    default:
      problems.push(`OTEL_TRACES_SAMPLER "${name}" is not a sampler streamgate knows; parentbased_always_on applies`);
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** OTEL_TRACES_SAMPLER_ARG for the ratio samplers: a number from 0 to 1, 1 when absent or wrong. */
function ratioFromEnv(env: Env, problems: EnvProblem[]): number {
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (!raw) return 1;
  const ratio = Number(raw);
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return ratio;
  problems.push(`OTEL_TRACES_SAMPLER_ARG "${raw}" is not a ratio from 0 to 1; 1 applies`);
  return 1;
}

const BSP: ReadonlyArray<readonly [variable: string, option: 'scheduledDelayMillis' | 'exportTimeoutMillis' | 'maxQueueSize' | 'maxExportBatchSize', min: number]> = [
  ['OTEL_BSP_SCHEDULE_DELAY', 'scheduledDelayMillis', 0],
  ['OTEL_BSP_EXPORT_TIMEOUT', 'exportTimeoutMillis', 0],
  ['OTEL_BSP_MAX_QUEUE_SIZE', 'maxQueueSize', 1],
  ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'maxExportBatchSize', 1],
];

/**
 * The batch processor's sizes and delays from OTEL_BSP_*; what is not set
 * keeps the processor's defaults (5 s, 30 s, 2048, 512). A batch larger than
 * the queue is cut to the queue's size, as the processor requires.
 */
export function batchOptionsFromEnv(env: Env, problems: EnvProblem[] = []): Omit<BatchSpanProcessorOptions, 'exporter'> {
  const options: Omit<BatchSpanProcessorOptions, 'exporter'> = {};
  for (const [variable, option, min] of BSP) {
    const raw = env[variable]?.trim();
    if (!raw) continue;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= min) options[option] = value;
    else problems.push(`${variable} "${raw}" is not a whole number of at least ${min}; the default applies`);
  }
  const queue = options.maxQueueSize ?? 2048;
  if (options.maxExportBatchSize !== undefined && options.maxExportBatchSize > queue) options.maxExportBatchSize = queue;
  return options;
}
