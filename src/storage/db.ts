import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export type Sql = postgres.Sql;

/**
 * Opens the Postgres pool. Notices are dropped: migrations emit harmless ones.
 * The application_name is unique per pool, so the pool-usage gauge
 * (src/observability/store-metrics.ts) can find this pool's connections.
 */
export function connectDatabase(url: string, max: number): Sql {
  const connection = { application_name: `streamgate/${process.pid}/${randomBytes(3).toString('hex')}` };
  return postgres(url, { max, onnotice: () => {}, idle_timeout: 30, connect_timeout: 10, connection });
}
