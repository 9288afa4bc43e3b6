import t from 'tap';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { loadConfig } from '../../../src/config/load-config.js';
import { attemptChannel, type AttemptMessage } from '../../../src/observability/channels.js';
import { dispatchFailure } from '../../../src/delivery/dispatch-failure.js';
import { createNodeMetrics } from '../../../src/observability/metrics-registry.js';
import { MetricSources } from '../../../src/observability/metric-sources.js';
import type { Sql } from '../../../src/storage/db.js';

// No database: the pool gauge's query fails and the scrape still answers.
const sql = Object.assign(() => Promise.reject(new Error('no database')), { options: { connection: { application_name: 'x' } } }) as unknown as Sql;

function attempt(targetPublicId: string, status: number | null, errorCode: string | null, outcome: AttemptMessage['outcome']): AttemptMessage {
  return {
    record: { receivedAt: Date.now() - 50 } as AttemptMessage['record'],
    target: {} as AttemptMessage['target'],
    eventId: 'evt_x',
    targetPublicId,
    attempt: 1,
    outcome,
    status,
    errorCode,
    failureKind: errorCode === null ? null : dispatchFailure(errorCode).kind,
    reason: null,
    durationMs: 12,
  };
}

t.test('two registries are independent, and a closed one stops counting', async (t) => {
  const config = loadConfig({}, {});
  const a = createNodeMetrics(config, new MetricSources(), sql);
  const b = createNodeMetrics(config, new MetricSources(), sql);
  attemptChannel.publish(attempt('tgt_1', 200, null, 'delivered'));
  b.close();
  attemptChannel.publish(attempt('tgt_1', null, 'ETIMEDOUT', 'retry'));
  a.close();
  attemptChannel.publish(attempt('tgt_1', 500, null, 'retry'));
  const count = async (m: typeof a, outcome: string) => {
    const fam = parsePrometheusTextFormat(await m.registry.metrics()).find((f) => f.name === 'streamgate_delivery_attempts_total')!;
    return Number(fam.metrics.find((s) => s.labels?.outcome === outcome)?.value ?? 0);
  };
  t.equal(await count(a, '2xx'), 1);
  t.equal(await count(a, 'timeout'), 1);
  t.equal(await count(a, '5xx'), 0, 'after close nothing is counted');
  t.equal(await count(b, 'timeout'), 0, 'closed before the second attempt');
});

t.test('perTarget caps the target label at maxTargets', async (t) => {
  const config = loadConfig({}, { metrics: { perTarget: true, maxTargets: 3 } });
  const m = createNodeMetrics(config, new MetricSources(), sql);
  t.teardown(() => m.close());
  for (let i = 0; i < 50; i++) attemptChannel.publish(attempt(`tgt_${i}`, 200, null, 'delivered'));
  const fam = parsePrometheusTextFormat(await m.registry.metrics()).find((f) => f.name === 'streamgate_delivery_delivered_total')!;
  const byTarget = Object.fromEntries(fam.metrics.map((s) => [s.labels!.target, Number(s.value)]));
  t.same(byTarget, { tgt_0: 1, tgt_1: 1, tgt_2: 1, other: 47 });
});

t.test('without sources every gauge reads 0 rather than missing', async (t) => {
  const m = createNodeMetrics(loadConfig({}, {}), new MetricSources(), sql);
  t.teardown(() => m.close());
  const fams = new Map(parsePrometheusTextFormat(await m.registry.metrics()).map((f) => [f.name, f]));
  for (const name of ['streamgate_consumer_lag_total', 'streamgate_delivery_lanes_parked', 'streamgate_delivery_in_flight', 'streamgate_attempt_log_backlog', 'streamgate_ingress_appends_in_flight']) {
    t.equal(fams.get(name)?.metrics[0]?.value, '0', name);
  }
});
