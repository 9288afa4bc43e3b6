import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Sql } from './db.js';

// SQL files stay in src/ (tsc does not copy them); from dist/ or src/ alike
// this resolves to <package root>/src/storage/migrations.
const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/storage/migrations/', import.meta.url));

// Any fixed 64-bit number: serialises migrations when several nodes start at once.
const MIGRATION_LOCK = 7_431_022_615;

/**
 * Applies the numbered SQL files not yet recorded in schema_migrations, in
 * order, each in its own transaction. Returns the names it applied.
 */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d+_[\w-]+\.sql$/.test(f)).sort();
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await tx<{ name: string }[]>`SELECT name FROM schema_migrations`).map((r) => r.name));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.unsafe(readFileSync(MIGRATIONS_DIR + file, 'utf8'));
      await tx`INSERT INTO schema_migrations (name) VALUES (${file})`;
      applied.push(file);
    }
    return applied;
  });
}
