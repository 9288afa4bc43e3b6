import { AggregatorRegistry, Registry } from 'prom-client';
import type { ProcessMetrics } from '../../observability/node-metrics.js';

/** One thread's registry as JSON (registry.getMetricsAsJSON()), by thread index (0: the main thread). */
export interface ThreadSeries {
  index: number;
  metrics: unknown[];
}

/** The parts of a metric's JSON form this file reads and writes. */
interface Json {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: Array<{ labels: Record<string, string | number>; value: number }>;
}

/** Process-wide series every thread's default collectors read alike (CPU, RSS, fds, start time): the main thread's only. */
const PROCESS_WIDE = /^streamgate_process_/;

/**
 * Per-thread series that a sum would misstate: an event loop's lag (the
 * process's is its slowest thread's), its utilization (their mean) and `_info`
 * series (one per process).
 */
function aggregatorFor(name: string): string | null {
  if (/_eventloop_lag/.test(name)) return 'max';
  // A share of each thread's time: the mean over the threads, never a sum above 1.
  if (/_eventloop_utilization$/.test(name)) return 'average';
  if (/_info$/.test(name)) return 'first';
  return null;
}

/** Per-thread totals shown beside the aggregate, to see how the kernel or the guard spreads the work. */
const PER_THREAD: Array<[from: string, name: string, help: string]> = [
  ['streamgate_http_requests_total', 'streamgate_thread_http_requests_total', 'HTTP requests answered, by node thread.'],
  ['streamgate_delivery_attempts_total', 'streamgate_thread_delivery_attempts_total', 'Delivery attempts made, by node thread.'],
];

function total(metrics: readonly Json[], name: string): number {
  const metric = metrics.find((m) => m.name === name);
  return metric ? metric.values.reduce((sum, v) => sum + v.value, 0) : 0;
}

/**
 * The whole process's series from every thread's: counters, histograms and
 * gauges summed over the threads (each thread counts its own requests,
 * attempts, lanes, partitions and pool connections), process-wide series
 * taken once, event-loop lag as the slowest thread's, plus `streamgate_threads` and the per-thread totals above.
 */
export async function aggregateThreads(series: readonly ThreadSeries[]): Promise<string> {
  const lists = series.map(({ index, metrics }) =>
    (metrics as Json[])
      .filter((m) => index === 0 || !PROCESS_WIDE.test(m.name))
      .map((m) => {
        const aggregator = aggregatorFor(m.name);
        return aggregator ? { ...m, aggregator } : m;
      }),
  );
  const extra: Json[] = [
    { name: 'streamgate_threads', help: 'Node threads answering in this process (server.threads).', type: 'gauge', aggregator: 'sum', values: [{ labels: {}, value: series.length }] },
  ];
  for (const [from, name, help] of PER_THREAD) {
    extra.push({
      name,
      help,
      type: 'counter',
      aggregator: 'sum',
      values: series.map(({ index, metrics }) => ({ labels: { thread: String(index) }, value: total(metrics as Json[], from) })),
    });
  }
  return AggregatorRegistry.aggregate([...lists, extra] as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics();
}

/** The main thread's GET /metrics: its own registry and every other thread's, asked for at scrape time. */
export class MainThreadMetrics implements ProcessMetrics {
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly ownsMetricsPort = true;
  private registry: Registry | null = null;

  private readonly others: () => Promise<ThreadSeries[]>;
  constructor(others: () => Promise<ThreadSeries[]>) {
    this.others = others;
  }

  attach(registry: Registry): void {
    this.registry = registry;
  }

  async metrics(): Promise<string> {
    const own: ThreadSeries = { index: 0, metrics: this.registry ? await this.registry.getMetricsAsJSON() : [] };
    return aggregateThreads([own, ...(await this.others())]);
  }
}

/** Another thread's GET /metrics: the main thread answers for the process; its own registry if that fails. */
export class NodeThreadMetrics implements ProcessMetrics {
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly ownsMetricsPort = false;
  registry: Registry | null = null;

  private readonly askMain: () => Promise<string | null>;
  constructor(askMain: () => Promise<string | null>) {
    this.askMain = askMain;
  }

  attach(registry: Registry): void {
    this.registry = registry;
  }

  async metrics(): Promise<string> {
    return (await this.askMain()) ?? (this.registry ? this.registry.metrics() : '');
  }
}
