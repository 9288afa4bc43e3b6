import postgres from 'postgres';

export type Sql = postgres.Sql;

/**
 * Opens the Postgres pool. Notices are dropped: migrations emit harmless ones.
 * `connectTimeoutMs` bounds dialling and the startup handshake, so a silent
 * database fails a new connection with CONNECT_TIMEOUT instead of hanging it.
 */
export function connectDatabase(url: string, max: number, connectTimeoutMs = 10_000): Sql {
  return postgres(url, {
    max,
    onnotice: () => {},
    idle_timeout: 30,
    connect_timeout: connectTimeoutMs / 1000,
    // Seconds before redialling after a failed connection. postgres.js grows
    // this to 20 s, and queries wait for the redial: during an outage every
    // request would hang until its deadline instead of failing at once, and
    // the pool would come back up to 20 s after the database did.
    backoff: (retries: number) => Math.min(0.05 * retries, 0.5),
  });
}
