import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QueueView } from '../ingress/queue-directory.js';
import { acceptedChannel, answeredChannel, appendChannel, replayedChannel, type AcceptedMessage, type AnsweredMessage, type AppendMessage } from './channels.js';
import type { ChannelSubscriptions } from './channel-subscriptions.js';
import type { LabelCap } from './label-cap.js';
import type { MetricSources } from './metric-sources.js';

/** Seconds; appends wait for Kafka's acknowledgement (acks=all) or the disk sync of the embedded log. */
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const EVENT_ROUTE = /^\/events\//;

/**
 * HTTP and ingress series, fed by the answered / accepted / replayed / append
 * channels. `queues` is set when metrics.perTarget labels ingress by queue.
 */
export function ingressMetrics(registry: Registry, subs: ChannelSubscriptions, sources: MetricSources, queues: LabelCap | null): void {
  const requests = new Counter({
    name: 'streamgate_http_requests_total',
    help: 'HTTP requests answered, by route pattern (never the concrete path), method and status code.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const refused = new Counter({
    name: 'streamgate_ingress_refused_total',
    help: 'Events refused at ingress (POST /events...), by the error code of the answer.',
    labelNames: ['code'],
    registers: [registry],
  });
  const queueLabels = queues ? ['queue'] : [];
  const accepted = new Counter({
    name: 'streamgate_ingress_accepted_total',
    help: 'Events accepted (answered 202 after the log acknowledged them); idempotent replays are not counted.',
    labelNames: queueLabels,
    registers: [registry],
  });
  const bytes = new Counter({
    name: 'streamgate_ingress_bytes_total',
    help: 'Body bytes of accepted events.',
    labelNames: queueLabels,
    registers: [registry],
  });
  const replayed = new Counter({
    name: 'streamgate_ingress_replayed_total',
    help: 'Idempotent replays: requests answered with the first event id of their Idempotency-Key.',
    registers: [registry],
  });
  const appendSeconds = new Histogram({
    name: 'streamgate_ingress_append_duration_seconds',
    help: 'Time from handing an event to the log writer to its acknowledgement (acknowledged appends only; failures show as 503s).',
    buckets: APPEND_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'streamgate_ingress_appends_in_flight',
    help: 'POST /events requests inside the handler (authenticating or waiting for the log), not yet answered.',
    registers: [registry],
    collect() {
      this.set(sources.ingressInFlight?.() ?? 0);
    },
  });

  // Children resolved once per label combination: the per-request cost is a map lookup.
  const requestChildren = new Map<string, Counter.Internal>();
  subs.on<AnsweredMessage>(answeredChannel, (ex) => {
    const key = `${ex.status} ${ex.method} ${ex.route}`;
    let child = requestChildren.get(key);
    if (!child) {
      child = requests.labels({ route: ex.route || 'unmatched', method: ex.method, status: String(ex.status) });
      requestChildren.set(key, child);
    }
    child.inc();
    if (ex.errorCode !== null && EVENT_ROUTE.test(ex.route)) refused.inc({ code: ex.errorCode });
  });
  // Histograms carry no labels: a series per bucket per label value adds up fast.
  subs.on<AppendMessage>(appendChannel, (m) => {
    if (m.ok) appendSeconds.observe(m.durationMs / 1000);
  });
  subs.on<QueueView>(replayedChannel, () => replayed.inc());
  if (queues) {
    subs.on<AcceptedMessage>(acceptedChannel, (m) => {
      const queue = queues.label(`${m.tenantPublicId}/${m.queueName}`);
      accepted.inc({ queue });
      bytes.inc({ queue }, m.bytes);
    });
  } else {
    subs.on<AcceptedMessage>(acceptedChannel, (m) => {
      accepted.inc();
      bytes.inc(m.bytes);
    });
  }
}
