import { LATENCY_BUCKETS, latencyQuantile } from './latency-buckets.js';
import type { RollupSum } from './rollup-repo.js';
import { STATS_WINDOWS, type StatsWindow } from './stats-window.js';

export const ATTEMPT_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'timeout', 'network'] as const;
type AttemptCounts = Record<(typeof ATTEMPT_CLASSES)[number], number>;

/** One step of a series. */
export interface StatsPoint {
  /** The step's start (ISO-8601 UTC). */
  t: string;
  accepted: number;
  delivered: number;
  retrying: number;
  failed: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
}

/** A whole window summed. */
export interface StatsTotals {
  accepted: number;
  delivered: number;
  retrying: number;
  failed: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  attempts: AttemptCounts & { total: number };
  /** Each class's share of the attempts (0…1; all 0 without attempts). */
  attemptShares: AttemptCounts;
}

export interface StatsSeries {
  totals: StatsTotals;
  series: StatsPoint[];
}

/** What GET /v1/tenants/{tenant}/stats answers (src/api/v1/stats-views.ts is its schema). */
export interface StatsReport {
  window: StatsWindow;
  stepSeconds: number;
  from: string;
  to: string;
  /** The queue asked for, or null: every queue. */
  queue: string | null;
  total: StatsSeries;
  queues: Array<StatsSeries & { name: string }>;
}

/** Counts and latency per step of one series, as the sums are added up. */
class Accumulated {
  readonly counts: Float64Array;
  readonly latency: Float64Array;

  readonly points: number;
  constructor(points: number) {
    this.points = points;
    this.counts = new Float64Array(points * 10);
    this.latency = new Float64Array(points * LATENCY_BUCKETS);
  }

  add(point: number, sum: RollupSum): void {
    for (let i = 0; i < 10; i++) this.counts[point * 10 + i]! += sum.counts[i]!;
    const latency = sum.latency;
    for (let i = 0; i < latency.length && i < LATENCY_BUCKETS; i++) this.latency[point * LATENCY_BUCKETS + i]! += latency[i]!;
  }

  series(fromS: number, stepSeconds: number): StatsSeries {
    const series: StatsPoint[] = [];
    const all = new Float64Array(10);
    const allLatency = new Float64Array(LATENCY_BUCKETS);
    for (let p = 0; p < this.points; p++) {
      const c = this.counts.subarray(p * 10, p * 10 + 10);
      const l = this.latency.subarray(p * LATENCY_BUCKETS, (p + 1) * LATENCY_BUCKETS);
      for (let i = 0; i < 10; i++) all[i]! += c[i]!;
      for (let i = 0; i < LATENCY_BUCKETS; i++) allLatency[i]! += l[i]!;
      series.push({
        t: new Date((fromS + p * stepSeconds) * 1000).toISOString(),
        accepted: c[0]!, delivered: c[1]!, retrying: c[2]!, failed: c[3]!,
        latencyP50Ms: ms(latencyQuantile(l, 0.5)), latencyP99Ms: ms(latencyQuantile(l, 0.99)),
      });
    }
    const attempts = { total: 0 } as AttemptCounts & { total: number };
    ATTEMPT_CLASSES.forEach((cls, i) => {
      attempts[cls] = all[4 + i]!;
      attempts.total += all[4 + i]!;
    });
    const attemptShares = {} as AttemptCounts;
    for (const cls of ATTEMPT_CLASSES) attemptShares[cls] = attempts.total === 0 ? 0 : Math.round((attempts[cls] / attempts.total) * 10_000) / 10_000;
    return {
      totals: {
        accepted: all[0]!, delivered: all[1]!, retrying: all[2]!, failed: all[3]!,
        latencyP50Ms: ms(latencyQuantile(allLatency, 0.5)), latencyP99Ms: ms(latencyQuantile(allLatency, 0.99)),
        attempts, attemptShares,
      },
      series,
    };
  }
}

/** Latencies to a tenth of a millisecond (the buckets are 19 % wide anyway). */
function ms(value: number | null): number | null {
  return value === null ? null : Math.round(value * 10) / 10;
}

/**
 * The answer of the stats API from the window's rows: every step zero-filled,
 * the total and each queue (busiest first) with its series and totals.
 */
export function statsReport(window: StatsWindow, fromS: number, toS: number, queue: string | null, sums: readonly RollupSum[]): StatsReport {
  const { stepSeconds } = STATS_WINDOWS[window];
  const points = Math.round((toS - fromS) / stepSeconds);
  const total = new Accumulated(points);
  const byQueue = new Map<string, Accumulated>();
  for (const sum of sums) {
    const point = Math.floor((sum.at - fromS) / stepSeconds);
    if (point < 0 || point >= points) continue;
    let acc = byQueue.get(sum.queue);
    if (!acc) byQueue.set(sum.queue, (acc = new Accumulated(points)));
    acc.add(point, sum);
    total.add(point, sum);
  }
  const queues = [...byQueue].map(([name, acc]) => ({ name, ...acc.series(fromS, stepSeconds) }));
  queues.sort((a, b) => b.totals.accepted + b.totals.delivered - (a.totals.accepted + a.totals.delivered) || a.name.localeCompare(b.name));
  return {
    window,
    stepSeconds,
    from: new Date(fromS * 1000).toISOString(),
    to: new Date(toS * 1000).toISOString(),
    queue,
    total: total.series(fromS, stepSeconds),
    queues,
  };
}
