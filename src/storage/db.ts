import postgres from 'postgres';

export type Sql = postgres.Sql;

/**
 * Opens the Postgres pool. Notices are dropped: migrations emit harmless ones.
 * `connectTimeoutMs` bounds dialling and the startup handshake, so a silent
 * database fails a new connection with CONNECT_TIMEOUT instead of hanging it.
 */
export function connectDatabase(url: string, max: number, connectTimeoutMs = 10_000): Sql {
  return postgres(url, { max, onnotice: () => {}, idle_timeout: 30, connect_timeout: connectTimeoutMs / 1000 });
}
