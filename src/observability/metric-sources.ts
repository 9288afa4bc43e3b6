import type { PartitionLag } from '../event-log/event-log.js';

/** What the delivery role keeps that the gauges read at scrape time. */
export interface DeliverySources {
  lanes(): { active: number; parked: number };
  inFlightByOrigin(): Array<[origin: string, active: number]>;
  /** Flow control's current concurrency limit per origin (its targets' limits added up). */
  concurrencyLimitByOrigin?(): Array<[origin: string, limit: number]>;
  /** Attempt-log entries buffered, not yet written to Postgres. */
  attemptLogBacklog(): number;
  /** The partitions this member owns and their lag. */
  lag(): PartitionLag[];
}

/** What the retention sweep last saw (src/jobs/retention-sweep.ts), for the retention gauges. */
export interface RetentionFigures {
  /** Per table: rows (catalog estimate), bytes with indexes, about the oldest receive time kept (epoch ms). */
  tables: Array<{ table: string; rows: number; bytes: number; oldestMs: number | null }>;
  /** How long this node's last sweep took; null before its first (another node may be the sweeper). */
  sweepSeconds: number | null;
  /** When this node last swept (epoch ms). */
  sweptAt: number | null;
}

/**
 * The state objects the roles already keep, handed to the metrics gauges.
 * Roles fill in what they run; gauges read it only when Prometheus scrapes,
 * so nothing on the data path calls into metrics.
 */
export class MetricSources {
  /** POST /events requests inside the handler (ingress role). */
  ingressInFlight: (() => number) | null = null;
  delivery: DeliverySources | null = null;
  /** The retention sweep (management role). */
  retention: { figures(): RetentionFigures } | null = null;
}
