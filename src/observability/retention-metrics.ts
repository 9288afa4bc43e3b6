import { Gauge, type Registry } from 'prom-client';
import type { MetricSources } from './metric-sources.js';

/**
 * What Postgres keeps per event (docs/operations.md#retention), as the
 * retention sweep last read it from the catalog: nothing here queries the
 * database at scrape time. Management nodes only (they run the sweep).
 */
export function retentionMetrics(registry: Registry, sources: MetricSources): void {
  const figures = () => sources.retention?.figures() ?? null;
  const rows = new Gauge({
    name: 'streamgate_retention_rows',
    help: 'Rows Postgres keeps per table (pg_class.reltuples over its partitions: an estimate, refreshed by autovacuum), as of the last sweep.',
    labelNames: ['table'],
    registers: [registry],
    collect() {
      rows.reset();
      for (const t of figures()?.tables ?? []) rows.set({ table: t.table }, t.rows);
    },
  });
  const bytes = new Gauge({
    name: 'streamgate_retention_bytes',
    help: 'Bytes Postgres keeps per table, indexes and TOAST included (pg_total_relation_size over its partitions), as of the last sweep.',
    labelNames: ['table'],
    registers: [registry],
    collect() {
      bytes.reset();
      for (const t of figures()?.tables ?? []) bytes.set({ table: t.table }, t.bytes);
    },
  });
  const oldest = new Gauge({
    name: 'streamgate_retention_oldest_record_age_seconds',
    help: 'Age now of about the oldest record kept (event_log: by receive time) as of the last sweep.',
    labelNames: ['table'],
    registers: [registry],
    collect() {
      oldest.reset();
      const now = Date.now();
      for (const t of figures()?.tables ?? []) if (t.oldestMs !== null) oldest.set({ table: t.table }, Math.max(0, (now - t.oldestMs) / 1000));
    },
  });
  const duration = new Gauge({
    name: 'streamgate_retention_sweep_duration_seconds',
    help: 'How long this node\'s last retention sweep took (absent until it swept: one node of the cluster sweeps at a time).',
    registers: [registry],
    collect() {
      const s = figures()?.sweepSeconds;
      if (s !== null && s !== undefined) duration.set(s);
    },
  });
  const last = new Gauge({
    name: 'streamgate_retention_last_sweep_timestamp_seconds',
    help: 'When this node last completed a retention sweep (Unix time).',
    registers: [registry],
    collect() {
      const at = figures()?.sweptAt;
      if (at !== null && at !== undefined) last.set(at / 1000);
    },
  });
}
