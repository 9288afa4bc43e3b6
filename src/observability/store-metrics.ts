import { Counter, Gauge, type Registry } from 'prom-client';
import type { Sql } from '../storage/db.js';
import { redisErrorChannel } from './channels.js';
import type { ChannelSubscriptions } from './channel-subscriptions.js';

/** A scrape never waits on a slow database longer than this; the pool gauges keep their last value then. */
const POOL_QUERY_TIMEOUT_MS = 1_000;

/**
 * Cache and database series. postgres.js keeps its pool to itself, so the
 * pool's use is read from Postgres: the connections with this pool's
 * application_name (unique per process, see connectDatabase), and how many of
 * them run a statement (the scrape's own query not counted).
 */
export function storeMetrics(registry: Registry, subs: ChannelSubscriptions, sql: Sql, maxConnections: number): void {
  const redisErrors = new Counter({
    name: 'streamgate_redis_errors_total',
    help: 'Errors reported by the Redis clients (connection refused, reset, timeouts), by error code.',
    labelNames: ['code'],
    registers: [registry],
  });
  subs.on<string>(redisErrorChannel, (code) => redisErrors.inc({ code }));

  new Gauge({
    name: 'streamgate_db_pool_max_connections',
    help: 'Size limit of this process\'s Postgres pool (database.maxConnections).',
    registers: [registry],
  }).set(maxConnections);
  const applicationName = (sql.options.connection as Record<string, unknown>).application_name as string;
  const connections = new Gauge({
    name: 'streamgate_db_pool_connections',
    help: 'Connections of this process\'s Postgres pool by state: open (all), busy (running a statement).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      let timer: NodeJS.Timeout | undefined;
      try {
        const rows = await Promise.race([
          sql<Array<{ open: number; busy: number }>>`
            select count(*)::int as open, count(*) filter (where state = 'active' and pid <> pg_backend_pid())::int as busy
            from pg_stat_activity where application_name = ${applicationName}`,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('timeout')), POOL_QUERY_TIMEOUT_MS);
          }),
        ]);
        connections.set({ state: 'open' }, rows[0]!.open);
        connections.set({ state: 'busy' }, rows[0]!.busy);
      } catch {
        // Postgres away or slow: the scrape still answers, with the last values.
      } finally {
        clearTimeout(timer);
      }
    },
  });
}
