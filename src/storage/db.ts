import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export type Sql = postgres.Sql;

/**
 * Opens the Postgres pool. Notices are dropped: migrations emit harmless ones.
 * `connectTimeoutMs` bounds dialling and the startup handshake, so a silent
 * database fails a new connection with CONNECT_TIMEOUT instead of hanging it.
 * The application_name is unique per pool, so the pool-usage gauge
 * (src/observability/store-metrics.ts) can find this pool's connections.
 */
export function connectDatabase(url: string, max: number, connectTimeoutMs = 10_000): Sql {
  const connection = { application_name: `streamgate/${process.pid}/${randomBytes(3).toString('hex')}` };
  return postgres(url, {
    max,
    onnotice: () => {},
    idle_timeout: 30,
    connect_timeout: connectTimeoutMs / 1000,
    connection,
    // Seconds before redialling after a failed connection. postgres.js grows
    // this to 20 s, and queries wait for the redial: during an outage every
    // request would hang until its deadline instead of failing at once, and
    // the pool would come back up to 20 s after the database did.
    backoff: (retries: number) => Math.min(0.05 * retries, 0.5),
  });
}
