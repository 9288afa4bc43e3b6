import { Gauge, type Registry } from 'prom-client';
import { attemptChannel, targetDisabledChannel, type AttemptMessage } from './channels.js';
import type { ChannelSubscriptions } from './channel-subscriptions.js';
import type { LabelCap } from './label-cap.js';
import type { MetricSources } from './metric-sources.js';
import { outcomeClass, type OutcomeClass } from './outcome-class.js';
import { FastHistogram, TallyCounter, type TallyCell } from './fast-metrics.js';

/** Seconds: receivers answer in milliseconds to the delivery timeout. */
const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds from accept: milliseconds when healthy, up to the retry horizon (days) when not. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21_600, 86_400];

/**
 * Delivery series: attempts and their consequences from the attempt channel
 * (published once per real attempt, simulated ones excluded); lanes,
 * per-origin in-flight and the attempt-log backlog read at scrape time.
 * `targets` and `origins` are set when metrics.perTarget labels series by target
 * and in-flight requests by origin.
 */
export function deliveryMetrics(registry: Registry, subs: ChannelSubscriptions, sources: MetricSources, targets: LabelCap | null, origins: LabelCap | null): void {
  const attempts = new TallyCounter(
    'streamgate_delivery_attempts_total',
    'Delivery attempts by outcome class: 2xx, 3xx, 4xx, 5xx (response status), timeout, network, ssrf (address refused).',
  ).register(registry);
  const delivered = new TallyCounter('streamgate_delivery_delivered_total', 'Deliveries that succeeded (one per event and target).').register(registry);
  const retries = new TallyCounter('streamgate_delivery_retries_scheduled_total', 'Failed attempts that were scheduled to be tried again.').register(registry);
  const deadLettered = new TallyCounter(
    'streamgate_delivery_dead_lettered_total',
    'Deliveries that failed for good (no retry left, or a status that is not retried); they stay failed until redelivered.',
  ).register(registry);
  const disabled = new TallyCounter('streamgate_delivery_targets_disabled_total', 'Targets this node disabled (410 Gone, or failing continuously).').register(registry);
  const duration = new FastHistogram(
    'streamgate_delivery_attempt_duration_seconds',
    'Duration of one delivery attempt (connect, request, response); never per target (a series per bucket and target would add up fast).',
    ATTEMPT_BUCKETS,
  ).register(registry);
  const firstAttempt = new FastHistogram(
    'streamgate_delivery_accept_to_first_attempt_seconds',
    'Time from the event being accepted at ingress to the end of its first delivery attempt to a target.',
    LATENCY_BUCKETS,
  ).register(registry);
  const acceptToDelivered = new FastHistogram(
    'streamgate_delivery_accept_to_delivered_seconds',
    'Time from the event being accepted at ingress to its successful delivery to a target.',
    LATENCY_BUCKETS,
  ).register(registry);

  /** The cells of one target (or of all, without perTarget), made once. */
  interface TargetCells {
    byOutcome: Map<OutcomeClass, TallyCell>;
    delivered: TallyCell;
    retries: TallyCell;
    deadLettered: TallyCell;
  }
  const cellsFor = (labels: Record<string, string>): TargetCells => ({
    byOutcome: new Map(),
    delivered: delivered.cell(labels),
    retries: retries.cell(labels),
    deadLettered: deadLettered.cell(labels),
  });
  const all = targets ? null : cellsFor({});
  const byTarget = new Map<string, TargetCells>();

  subs.on<AttemptMessage>(attemptChannel, (m) => {
    const now = Date.now();
    let cells = all;
    let target: string | null = null;
    if (targets) {
      cells = byTarget.get(m.targetPublicId) ?? null;
      target = targets.label(m.targetPublicId);
      if (!cells) byTarget.set(m.targetPublicId, (cells = cellsFor({ target })));
    }
    const outcome = outcomeClass(m);
    let attempt = cells!.byOutcome.get(outcome);
    if (!attempt) cells!.byOutcome.set(outcome, (attempt = attempts.cell(target === null ? { outcome } : { outcome, target })));
    attempt.value++;
    if (m.outcome === 'delivered') cells!.delivered.value++;
    else if (m.outcome === 'retry') cells!.retries.value++;
    else cells!.deadLettered.value++;
    duration.observe(m.durationMs / 1000);
    // The record carries its accept time; clocks of different nodes may differ a little.
    const sinceAccept = Math.max(0, now - m.record.receivedAt) / 1000;
    if (m.attempt === 1) firstAttempt.observe(sinceAccept);
    if (m.outcome === 'delivered') acceptToDelivered.observe(sinceAccept);
  });
  const disabledCell = disabled.cell({});
  subs.on<string>(targetDisabledChannel, () => disabledCell.value++);

  new Gauge({
    name: 'streamgate_delivery_lanes_active',
    help: 'Lanes (target × partition key) running in memory on this node.',
    registers: [registry],
    collect() {
      this.set(sources.delivery?.lanes().active ?? 0);
    },
  });
  new Gauge({
    name: 'streamgate_delivery_lanes_parked',
    help: 'Lanes parked in Postgres (waiting for a retry further away than delivery.retry.holdInMemoryMs) that this node owns.',
    registers: [registry],
    collect() {
      this.set(sources.delivery?.lanes().parked ?? 0);
    },
  });
  new Gauge({
    name: 'streamgate_delivery_in_flight',
    help: targets ? 'Delivery requests in flight, by receiver origin (capped like targets).' : 'Delivery requests in flight (all origins; per origin with metrics.perTarget).',
    labelNames: origins ? ['origin'] : [],
    registers: [registry],
    collect() {
      this.reset();
      const inFlight = sources.delivery?.inFlightByOrigin() ?? [];
      if (!origins) {
        let sum = 0;
        for (const [, active] of inFlight) sum += active;
        this.set(sum);
        return;
      }
      for (const [origin, active] of inFlight) this.inc({ origin: origins.label(origin) }, active);
    },
  });
  new Gauge({
    name: 'streamgate_delivery_concurrency_limit',
    help: origins
      ? 'Flow control: requests the receiver origin may have open at once now (adaptive, the limits of its targets added up; docs/flow-control.md).'
      : 'Flow control: requests open at once that the receivers allow now, all origins added up (per origin with metrics.perTarget).',
    labelNames: origins ? ['origin'] : [],
    registers: [registry],
    collect() {
      this.reset();
      const limits = sources.delivery?.concurrencyLimitByOrigin?.() ?? [];
      if (!origins) {
        let sum = 0;
        for (const [, limit] of limits) sum += limit;
        this.set(sum);
        return;
      }
      for (const [origin, limit] of limits) this.inc({ origin: origins.label(origin) }, limit);
    },
  });
  new Gauge({
    name: 'streamgate_attempt_log_backlog',
    help: 'Attempt-log entries buffered on this node, not yet written to Postgres.',
    registers: [registry],
    collect() {
      this.set(sources.delivery?.attemptLogBacklog() ?? 0);
    },
  });
}
