import type { Registry } from 'prom-client';
import type { NodeContext } from '../node/node-context.js';
import { createNodeMetrics } from './metrics-registry.js';
import { listenMetrics, metricsHandler } from './metrics-route.js';

/** What node.ts keeps of the metrics: where they are served and how to stop. */
export interface MetricsHandle {
  /** The separate metrics port when server.metricsPort is set; null when /metrics is on the public port. */
  port: number | null;
  stop(): void;
}

/**
 * GET /metrics for a whole process of several node threads (src/node/threads/):
 * each thread's registry is attached, the answer covers every thread.
 */
export interface ProcessMetrics {
  attach(registry: Registry): void;
  metrics(): Promise<string>;
  readonly contentType: string;
  /** False on the threads that never open server.metricsPort's listener (the main thread does). */
  readonly ownsMetricsPort: boolean;
}

/**
 * Wires Prometheus metrics into a node (config `metrics.*`, `server.metricsPort`):
 * nothing at all when disabled (no subscriber, so the channels cost nothing,
 * and /metrics answers 404); otherwise a registry fed by the channels and
 * GET /metrics on the public router or on its own listener. Call before the
 * router's fallback is registered.
 */
export async function startMetrics(ctx: NodeContext, processMetrics?: ProcessMetrics): Promise<MetricsHandle | null> {
  const { config } = ctx;
  if (!config.metrics.enabled) return null;
  const metrics = createNodeMetrics(config, ctx.metrics, ctx.sql);
  processMetrics?.attach(metrics.registry);
  const source = processMetrics ?? metrics.registry;
  if (config.server.metricsPort === 0) {
    ctx.router.add('get', '/metrics', { maxBodyBytes: 0 }, metricsHandler(source, config.metrics.token));
    return { port: null, stop: () => metrics.close() };
  }
  if (processMetrics && !processMetrics.ownsMetricsPort) return { port: null, stop: () => metrics.close() };
  try {
    const listener = await listenMetrics(source, config.metrics.token, config.server.host, config.server.metricsPort, ctx.log);
    ctx.log.info({ port: listener.port }, 'metrics served on their own port');
    return {
      port: listener.port,
      stop: () => {
        listener.close();
        metrics.close();
      },
    };
  } catch (err) {
    metrics.close();
    throw err;
  }
}
