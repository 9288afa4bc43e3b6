import postgres from 'postgres';

export type Sql = postgres.Sql;

/** Opens the Postgres pool. Notices are dropped: migrations emit harmless ones. */
export function connectDatabase(url: string, max: number): Sql {
  return postgres(url, { max, onnotice: () => {}, idle_timeout: 30, connect_timeout: 10 });
}
