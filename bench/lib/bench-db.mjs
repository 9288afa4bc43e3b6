import postgres from 'postgres';

const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A throwaway database per run, so the bench never touches the `streamgate`
 * database developers and tests use, and two runs cannot see each other's
 * queues. streamgate migrates it on bootstrap/start.
 */
export async function createBenchDatabase(suffix) {
  const name = `sg_bench_${suffix}`;
  const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    // Identifiers cannot be bound parameters; the name is our own [a-z0-9_] string.
    await sql.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

/** Drops it even if a stray connection is left (FORCE needs Postgres 13+). */
export async function dropBenchDatabase(name) {
  const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
