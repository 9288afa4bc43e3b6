import t from 'tap';
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { InMemorySpanExporter, SamplingDecision, type Sampler } from '@opentelemetry/sdk-trace';
import { createLogger } from '../../../src/observability/logger.js';
import { startTracing } from '../../../src/observability/tracing-start.js';
import { batchOptionsFromEnv, samplerFromEnv } from '../../../src/observability/tracing-env.js';

/** The decision `sampler` takes for a root span and for the child of a sampled / unsampled remote parent. */
function decisions(sampler: Sampler): { root: SamplingDecision; sampledParent: SamplingDecision; unsampledParent: SamplingDecision } {
  // The ratio samplers XOR the id's four 32-bit words: this one comes to 0xffffffff, which a ratio below 1 never samples.
  const traceId = 'ffffffff000000000000000000000000';
  const under = (flags: TraceFlags) => trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: 'b7ad6b7169203331', traceFlags: flags, isRemote: true });
  const decide = (ctx: typeof ROOT_CONTEXT) => sampler.shouldSample(ctx, traceId, 'x', SpanKind.SERVER, {}, []).decision;
  return { root: decide(ROOT_CONTEXT), sampledParent: decide(under(TraceFlags.SAMPLED)), unsampledParent: decide(under(TraceFlags.NONE)) };
}
const { RECORD_AND_SAMPLED: ON, NOT_RECORD: OFF } = SamplingDecision;

t.test('OTEL_TRACES_SAMPLER: parent-based always-on by default, the specification\'s names otherwise', async (t) => {
  t.same(decisions(samplerFromEnv({})), { root: ON, sampledParent: ON, unsampledParent: OFF }, 'default: a sender\'s unsampled trace is not recorded');
  t.same(decisions(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_on' })), { root: ON, sampledParent: ON, unsampledParent: ON });
  t.same(decisions(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' })), { root: OFF, sampledParent: OFF, unsampledParent: OFF });
  t.same(decisions(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })), { root: OFF, sampledParent: ON, unsampledParent: OFF });
  t.same(decisions(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' })), { root: OFF, sampledParent: OFF, unsampledParent: OFF });
  t.same(decisions(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' })), { root: OFF, sampledParent: ON, unsampledParent: OFF });
  t.same(decisions(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio' })), { root: ON, sampledParent: ON, unsampledParent: ON }, 'no ratio: 1');
});

t.test('a sampler name or ratio that is wrong is reported and the default applies', async (t) => {
  const problems: string[] = [];
  t.same(decisions(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, problems)), { root: ON, sampledParent: ON, unsampledParent: OFF });
  t.same(decisions(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, problems)).root, ON);
  t.match(problems, [/OTEL_TRACES_SAMPLER "jaeger_remote"/, /OTEL_TRACES_SAMPLER_ARG "2"/]);
});

t.test('OTEL_BSP_*: set values are taken, wrong ones reported, the batch never larger than the queue', async (t) => {
  t.same(batchOptionsFromEnv({}), {}, 'nothing set: the processor\'s defaults');
  t.same(batchOptionsFromEnv({ OTEL_BSP_SCHEDULE_DELAY: '1000', OTEL_BSP_EXPORT_TIMEOUT: '10000', OTEL_BSP_MAX_QUEUE_SIZE: '8192', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1024' }),
    { scheduledDelayMillis: 1000, exportTimeoutMillis: 10000, maxQueueSize: 8192, maxExportBatchSize: 1024 });
  t.same(batchOptionsFromEnv({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '512' }), { maxQueueSize: 100, maxExportBatchSize: 100 });
  const problems: string[] = [];
  t.same(batchOptionsFromEnv({ OTEL_BSP_MAX_QUEUE_SIZE: 'lots', OTEL_BSP_SCHEDULE_DELAY: '-1' }, problems), {});
  t.match(problems, [/OTEL_BSP_SCHEDULE_DELAY "-1"/, /OTEL_BSP_MAX_QUEUE_SIZE "lots"/]);
});

t.test('startTracing samples as the environment says (SDK 3 provider, no HTTP server needed)', async (t) => {
  for (const [env, recorded] of [[{}, 1], [{ OTEL_TRACES_SAMPLER: 'always_off' }, 0]] as const) {
    const exporter = new InMemorySpanExporter();
    const tracing = await startTracing(createLogger('silent'), { env, exporter, processor: 'simple' });
    const request = {};
    const span = tracing.startRequest(request, 'POST /events', null, null, { 'http.request.method': 'POST' });
    await tracing.step(request, 'append', async () => {});
    span?.end();
    // Read before stop(): shutting the exporter down empties it.
    const spans = exporter.getFinishedSpans();
    await tracing.stop();
    t.equal(spans.length, recorded * 2, `${JSON.stringify(env)}: ${spans.length} spans exported`);
    if (recorded) {
      t.equal(spans.find((s) => s.name === 'append')?.parentSpanContext?.spanId, span?.spanContext().spanId, 'the step is the request span\'s child');
      t.equal(spans[0]!.resource.attributes['service.name'], 'streamgate');
    }
  }
});
