import { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import type { Sql } from '../storage/db.js';
import { ChannelSubscriptions } from './channel-subscriptions.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { ingressMetrics } from './ingress-metrics.js';
import { LabelCap } from './label-cap.js';
import { logMetrics } from './log-metrics.js';
import { processMetrics } from './process-metrics.js';
import type { MetricSources } from './metric-sources.js';
import { storeMetrics } from './store-metrics.js';
import { retentionMetrics } from './retention-metrics.js';

/** A node's Prometheus registry and the channel subscriptions that feed it. */
export interface NodeMetrics {
  registry: Registry;
  /** Unsubscribes from the channels (the registry answers until the route goes away). */
  close(): void;
}

/**
 * Builds one registry per node (never prom-client's global default: several
 * nodes in one process, as in the tests, keep their series apart) with the
 * process defaults and streamgate's series, and subscribes to the data path's
 * channels. Note that channels are per process: nodes sharing a process count
 * each other's events.
 */
export function createNodeMetrics(config: Readonly<Config>, sources: MetricSources, sql: Sql): NodeMetrics {
  const registry = new Registry();
  // Not prom-client's collectDefaultMetrics(): see process-metrics.ts for why.
  const process = processMetrics(registry, config.metrics.eventLoopResolutionMs);
  const subs = new ChannelSubscriptions();
  const cap = () => (config.metrics.perTarget ? new LabelCap(config.metrics.maxTargets) : null);
  ingressMetrics(registry, subs, sources, cap());
  logMetrics(registry, subs, sources);
  deliveryMetrics(registry, subs, sources, cap(), cap());
  storeMetrics(registry, subs, sql, config.database.maxConnections);
  retentionMetrics(registry, sources);
  return {
    registry,
    close: () => {
      subs.close();
      process.close();
    },
  };
}
