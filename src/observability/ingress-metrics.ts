import { Gauge, type Registry } from 'prom-client';
import { answeredChannel, type AnsweredMessage } from './channels.js';
import type { ChannelSubscriptions } from './channel-subscriptions.js';
import { FastHistogram, TallyCounter, type TallyCell } from './fast-metrics.js';
import type { LabelCap } from './label-cap.js';
import type { MetricSources } from './metric-sources.js';

/** Seconds; appends wait for Kafka's acknowledgement (acks=all) or the disk sync of the embedded log. */
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const EVENT_ROUTE = /^\/events\//;

/**
 * HTTP and ingress series, fed by the answered channel: one message per
 * request, the answer itself, which carries what ingress did with the event. `queues` is set when metrics.perTarget labels ingress by queue.
 * The subscribers run once per request: they bump cached cells, no label
 * hashing or string building (fast-metrics.ts).
 */
export function ingressMetrics(registry: Registry, subs: ChannelSubscriptions, sources: MetricSources, queues: LabelCap | null): void {
  const requests = new TallyCounter(
    'streamgate_http_requests_total',
    'HTTP requests answered, by route pattern (never the concrete path), method and status code.',
  ).register(registry);
  const refused = new TallyCounter(
    'streamgate_ingress_refused_total',
    'Events refused at ingress (POST /events...), by the error code of the answer.',
  ).register(registry);
  const accepted = new TallyCounter(
    'streamgate_ingress_accepted_total',
    'Events accepted (answered 202 after the log acknowledged them); idempotent replays are not counted.',
  ).register(registry);
  const bytes = new TallyCounter('streamgate_ingress_bytes_total', 'Body bytes of accepted events.').register(registry);
  const replayed = new TallyCounter(
    'streamgate_ingress_replayed_total',
    'Idempotent replays: requests answered with the first event id of their Idempotency-Key.',
  ).register(registry);
  const appendSeconds = new FastHistogram(
    'streamgate_ingress_append_duration_seconds',
    'Time from handing an event to the log writer to its acknowledgement (acknowledged appends only; failures show as 503s).',
    APPEND_BUCKETS,
  ).register(registry);
  new Gauge({
    name: 'streamgate_ingress_appends_in_flight',
    help: 'POST /events requests inside the handler (authenticating or waiting for the log), not yet answered.',
    registers: [registry],
    collect() {
      this.set(sources.ingressInFlight?.() ?? 0);
    },
  });

  // route → method → status → cell. Route strings are the registered patterns
  // (one string object each), statuses small integers: three cheap lookups.
  // One message per request: the answer carries what ingress did (Exchange.ingress).
  const byRoute = new Map<string, Map<string, Map<number, TallyCell>>>();
  const replays = replayed.cell({});
  type Cells = { events: TallyCell; bytes: TallyCell };
  // Unlabelled unless metrics.perTarget: then one pair of cells per queue, made on first use.
  const plain: Cells | null = queues ? null : { events: accepted.cell({}), bytes: bytes.cell({}) };
  const byQueue = new Map<string, Cells>();
  const cellsOf = (q: { tenantPublicId: string; queueName: string }): Cells => {
    if (plain) return plain;
    const key = `${q.tenantPublicId}/${q.queueName}`;
    let cells = byQueue.get(key);
    if (!cells) {
      const queue = queues!.label(key);
      byQueue.set(key, (cells = { events: accepted.cell({ queue }), bytes: bytes.cell({ queue }) }));
    }
    return cells;
  };
  subs.on<AnsweredMessage>(answeredChannel, (ex) => {
    let byMethod = byRoute.get(ex.route);
    if (!byMethod) byRoute.set(ex.route, (byMethod = new Map()));
    let byStatus = byMethod.get(ex.method);
    if (!byStatus) byMethod.set(ex.method, (byStatus = new Map()));
    let cell = byStatus.get(ex.status);
    if (!cell) byStatus.set(ex.status, (cell = requests.cell({ route: ex.route || 'unmatched', method: ex.method, status: String(ex.status) })));
    cell.value++;
    if (ex.errorCode !== null) {
      if (EVENT_ROUTE.test(ex.route)) refused.cell({ code: ex.errorCode }).value++;
      return;
    }
    const outcome = ex.ingress;
    // Histograms carry no labels: a series per bucket per label value adds up fast.
    if (outcome.appendMs >= 0) appendSeconds.observe(outcome.appendMs / 1000);
    if (outcome.replayed) replays.value++;
    else if (outcome.queue !== null) {
      const cells = cellsOf(outcome.queue);
      cells.events.value++;
      cells.bytes.value += outcome.bytes;
    }
  });
}
