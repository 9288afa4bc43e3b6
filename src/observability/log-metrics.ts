import { Counter, Gauge, type Registry } from 'prom-client';
import { FastHistogram, TallyCounter } from './fast-metrics.js';
import { brokerErrorChannel, fetchChannel, produceChannel, rebalanceChannel, type BrokerErrorMessage, type FetchMessage, type ProduceMessage } from './channels.js';
import type { ChannelSubscriptions } from './channel-subscriptions.js';
import type { MetricSources } from './metric-sources.js';

const RECORDS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000];

/**
 * Event-log series: the writer's flushes and failures from the produce and
 * broker-error channels; the consumer's lag and assignment read from the
 * reader at scrape time (delivery nodes only).
 */
export function logMetrics(registry: Registry, subs: ChannelSubscriptions, sources: MetricSources): void {
  const batches = new TallyCounter(
    'streamgate_log_produce_batches_total',
    'Flushes of the log writer (one produce request per leader; one lmdb put on the embedded log), by result.',
  ).register(registry);
  const records = new FastHistogram('streamgate_log_produce_batch_records', 'Records per flush of the log writer.', RECORDS_BUCKETS).register(registry);
  const fetched = new FastHistogram(
    'streamgate_log_fetch_batch_records',
    'Records per fetch answer of the log reader (Kafka; _count is the fetches that brought records).',
    RECORDS_BUCKETS,
  ).register(registry);
  const retries = new Counter({
    name: 'streamgate_log_produce_retries_total',
    help: 'Produce requests sent again after a failure (the same records, the same sequence numbers).',
    registers: [registry],
  });
  const brokerErrors = new Counter({
    name: 'streamgate_log_broker_errors_total',
    help: 'Failed Kafka requests by operation (produce, fetch) and broker error code (no_answer: no broker answered).',
    labelNames: ['operation', 'code'],
    registers: [registry],
  });
  const rebalances = new Counter({
    name: 'streamgate_consumer_rebalances_total',
    help: 'Assignments this member received from the consumer group (the first one included).',
    registers: [registry],
  });

  const batchOk = batches.cell({ result: 'ok' });
  const batchFailed = batches.cell({ result: 'failed' });
  subs.on<ProduceMessage>(produceChannel, (m) => {
    (m.ok ? batchOk : batchFailed).value++;
    records.observe(m.records);
  });
  subs.on<FetchMessage>(fetchChannel, (m) => fetched.observe(m.records));
  subs.on<BrokerErrorMessage>(brokerErrorChannel, (m) => {
    if (m.retrying && m.operation === 'produce') retries.inc();
    if (m.errorCodes.length === 0) brokerErrors.inc({ operation: m.operation, code: 'no_answer' });
    // One failure may carry the same code for several partitions: count it once.
    for (const code of new Set(m.errorCodes)) brokerErrors.inc({ operation: m.operation, code });
  });
  subs.on<unknown>(rebalanceChannel, () => rebalances.inc());

  new Gauge({
    name: 'streamgate_consumer_lag',
    help: 'Records of a partition this node owns not yet committed by the consumer group (end of log − committed offset; 0 when caught up).',
    labelNames: ['partition'],
    registers: [registry],
    collect() {
      // Partitions that moved away must disappear, not keep their last value.
      this.reset();
      for (const { partition, lag } of sources.delivery?.lag() ?? []) this.set({ partition: String(partition) }, Number(lag));
    },
  });
  new Gauge({
    name: 'streamgate_consumer_lag_total',
    help: 'Sum of streamgate_consumer_lag over the partitions this node owns (0 when it owns none or is caught up).',
    registers: [registry],
    collect() {
      let sum = 0;
      for (const { lag } of sources.delivery?.lag() ?? []) sum += Number(lag);
      this.set(sum);
    },
  });
  new Gauge({
    name: 'streamgate_consumer_assigned_partitions',
    help: 'Partitions of the event topic this node owns in the consumer group.',
    registers: [registry],
    collect() {
      this.set(sources.delivery?.lag().length ?? 0);
    },
  });
}
