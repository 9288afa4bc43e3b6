import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { Sql } from '../storage/db.js';
import type { InvalidationBus } from '../cache/invalidation-bus.js';
import type { CacheStore } from '../cache/cache-store.js';
import type { KeyAuthenticator } from '../auth/key-authenticator.js';
import type { Router } from '../http/router.js';
import type { TopologyRepo } from '../storage/topology-repo.js';
import type { SsrfGuard } from '../delivery/http/ssrf-guard.js';
import type { RouteTable } from '../routing/route-table.js';
import type { EventLogBackend } from '../event-log/event-log.js';
import type { Check } from '../observability/readiness.js';
import type { Tracing } from '../observability/tracing.js';
import type { MetricSources } from '../observability/metric-sources.js';

/**
 * What every role of a process shares: configuration, the backends, the
 * caches that management writes invalidate, and the HTTP router.
 */
export interface NodeContext {
  config: Readonly<Config>;
  log: Logger;
  /** The pool as request handlers use it: a query waits at most database.requestTimeoutMs (src/storage/db-deadline.ts). */
  sql: Sql;
  /** The plain pool, for delivery and background work that retry on their own. */
  backgroundSql: Sql;
  /** The shared cache port (Redis in a cluster, in-process on a single node). */
  cache: CacheStore;
  bus: InvalidationBus;
  /** The event log (Kafka in a cluster, embedded on a single machine). */
  eventLog: EventLogBackend;
  /** True when an embedded backend limits this deployment to one node. */
  singleNode: boolean;
  router: Router;
  topology: TopologyRepo;
  keys: KeyAuthenticator;
  routes: RouteTable;
  guard: SsrfGuard;
  /** Spans for ingress, delivery attempts and management (disabled unless OTLP is configured). */
  tracing: Tracing;
  /** State the roles keep that the metrics gauges read at scrape time. */
  metrics: MetricSources;
}

/** A started role: how to let it finish its in-flight work before the process exits. */
export interface RoleHandle {
  /** Finishes in-flight work until `deadline` (epoch ms), then releases resources. */
  drain(deadline: number): Promise<void>;
  /** Readiness checks of the role's own (the delivery role's consumer-group membership), by name. */
  checks?: Record<string, Check>;
}
