import type { Metric, Registry } from 'prom-client';

/**
 * Counters and histograms for the per-request and per-attempt subscribers.
 * prom-client's labelled `inc()` and `observe()` hash label objects and
 * allocate on every call (≈ 250–350 ns each, measured in bench/metrics-cost.mjs's
 * hot-path check); these keep plain numbers that the subscriber bumps, and
 * hand prom-client the values only when /metrics is scraped. They implement
 * what a prom-client Registry reads from a metric (name, help, type,
 * aggregator, get()), so they are exported like any other series.
 */

interface ExportedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** One label combination's count: the subscriber keeps the cell and adds to `value`. */
export interface TallyCell {
  readonly labels: Readonly<Record<string, string>>;
  value: number;
}

abstract class Exported {
  readonly aggregator = 'sum' as const;

  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  constructor(
    name: string,
    help: string,
    type: 'counter' | 'histogram',
  ) {
    this.name = name;
    this.help = help;
    this.type = type;
  }

  abstract values(): ExportedValue[];

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportedValue[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }

  register(registry: Registry): this {
    // A structural stand-in for prom-client's own classes: the registry only calls get().
    registry.registerMetric(this as unknown as Metric);
    return this;
  }
}

/** A counter whose label combinations are cells the caller caches (see ingress-metrics.ts). */
export class TallyCounter extends Exported {
  private readonly cells = new Map<string, TallyCell>();

  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }

  /** The cell of `labels`, made on first use (cold: callers keep it). */
  cell(labels: Record<string, string>): TallyCell {
    const key = JSON.stringify(labels);
    let cell = this.cells.get(key);
    if (!cell) this.cells.set(key, (cell = { labels, value: 0 }));
    return cell;
  }

  values(): ExportedValue[] {
    return [...this.cells.values()].map((c) => ({ labels: c.labels, value: c.value }));
  }
}

/** A histogram without labels: a bucket scan and three additions per observation. */
export class FastHistogram extends Exported {
  private readonly bounds: Float64Array;
  /** counts[i]: observations ≤ bounds[i] and > bounds[i-1]; the last slot is +Inf. */
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(name: string, help: string, buckets: readonly number[]) {
    super(name, help, 'histogram');
    this.bounds = Float64Array.from([...buckets].sort((a, b) => a - b));
    this.counts = new Float64Array(this.bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  values(): ExportedValue[] {
    const out: ExportedValue[] = [];
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]!;
      out.push({ labels: { le: this.bounds[i]! }, value: cumulative, metricName: `${this.name}_bucket` });
    }
    out.push({ labels: { le: '+Inf' }, value: this.count, metricName: `${this.name}_bucket` });
    out.push({ labels: {}, value: this.sum, metricName: `${this.name}_sum` });
    out.push({ labels: {}, value: this.count, metricName: `${this.name}_count` });
    return out;
  }
}
