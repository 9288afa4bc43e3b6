import uWS from 'uWebSockets.js';
import type { Config, Role } from './config/schema.js';
import type { Logger } from './observability/logger.js';
import { connectDatabase } from './storage/db.js';
import { migrate } from './storage/migrate.js';
import { KeyRepo } from './storage/key-repo.js';
import { TopologyRepo } from './storage/topology-repo.js';
import { InvalidationBus } from './cache/invalidation-bus.js';
import { openBackends } from './node-backends.js';
import { KeyUsage } from './auth/key-usage.js';
import { KeyAuthenticator } from './auth/key-authenticator.js';
import { ClientAddressSource } from './http/client-address.js';
import { Router, type RouteInfo } from './http/router.js';
import { listenPublic } from './http/listen.js';
import { RouteTable } from './routing/route-table.js';
import { SsrfGuard } from './delivery/ssrf-guard.js';
import { subscribeLogging } from './observability/log-subscriber.js';
import { openApiJson } from './management/openapi.js';
import { registerDevSink } from './management/dev-sink.js';
import { firstRunBootstrap, type FirstRunInfo } from './management/first-run.js';
import type { NodeContext, RoleHandle } from './node-context.js';
import { startIngressRole } from './ingress/ingress-role.js';
import { startDeliveryRole } from './actors/delivery-role.js';
import { startManagementRole } from './management/management-role.js';
import { RoutingGate } from './routing/routing-gate.js';
import { WaasGateRepo } from './storage/waas-gate-repo.js';
import { DistributionRecorder } from './observability/distribution-metrics.js';
import { MetricSources } from './observability/metric-sources.js';
import { startMetrics } from './observability/node-metrics.js';

/** The configured networks, plus loopback on a single machine when allowed. */
function allowedNetworks(config: Readonly<Config>, embeddedLog: boolean): string[] {
  const nets = [...config.delivery.allowNetworks];
  if (embeddedLog && config.delivery.allowLoopbackInSingleNode) nets.push('127.0.0.0/8', '::1/128');
  return nets;
}

/** A running streamgate process: its HTTP port and how to stop it gracefully. */
export interface RunningNode {
  port: number;
  roles: readonly Role[];
  /** The HTTP routes this process serves (for the OpenAPI check). */
  routes: readonly RouteInfo[];
  /** The cluster's configuration version (bumped by every cache-invalidating write). */
  configVersion(): Promise<number>;
  /** Set when this start bootstrapped an empty database (keys shown once). */
  firstRun: FirstRunInfo | null;
  stop(): Promise<void>;
}

const ROLE_STARTERS: Record<Role, (ctx: NodeContext) => Promise<RoleHandle>> = {
  management: startManagementRole,
  ingress: startIngressRole,
  delivery: startDeliveryRole,
};

/**
 * Connects the backends, starts the roles this process serves and listens.
 * Several processes started against the same backends form one cluster: the
 * consumer group splits the partitions, management writes reach every node's
 * caches through the invalidation bus.
 *
 *   HTTP ──► ingress ──► Kafka topic ──► partition actors ──► receivers
 *   HTTP ──► management ──► Postgres ──► invalidation bus ──► every node's caches
 */
export async function startNode(config: Readonly<Config>, log: Logger): Promise<RunningNode> {
  const closers: Array<() => Promise<void> | void> = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'error while closing');
      }
    }
  };

  try {
    const backends = await openBackends(config, log);
    closers.push(() => backends.close());
    const sql = connectDatabase(backends.databaseUrl, config.database.maxConnections);
    closers.push(() => sql.end({ timeout: 5 }));
    const applied = await migrate(sql);
    if (applied.length > 0) log.info({ applied }, 'database migrated');

    const bus = new InvalidationBus(backends.cache);
    await bus.start();
    closers.push(() => bus.stop());

    const app = uWS.App();
    const topology = new TopologyRepo(sql);
    const keyRepo = new KeyRepo(sql);
    const keyUsage = new KeyUsage((keyIds) => keyRepo.touch(keyIds), log);
    // Before sql.end (closers run in reverse): the last notes are written first.
    closers.push(() => keyUsage.stop());
    const ctx: NodeContext = {
      config,
      log,
      sql,
      cache: backends.cache,
      bus,
      eventLog: backends.eventLog,
      singleNode: backends.singleNode,
      router: new Router(app, log, new ClientAddressSource(config.server.headerGuard, config.server.proxyProtocolFrom)),
      topology,
      keys: new KeyAuthenticator(keyRepo, config.ingress.cacheTtlMs, keyUsage),
      routes: new RouteTable(topology, config.ingress.cacheTtlMs, config.delivery.timeoutMs, {
        // A single node's in-process cache would only duplicate the gate's own: share only when clustered.
        gate: new RoutingGate(new WaasGateRepo(sql), {
          cache: backends.singleNode ? null : backends.cache,
          sharedTtlSeconds: config.waas.gateViewTtlSeconds,
          ttlMs: config.ingress.cacheTtlMs,
        }),
        versions: bus,
      }),
      guard: new SsrfGuard(allowedNetworks(config, backends.eventLog.kind === 'embedded')),
      metrics: new MetricSources(),
    };
    bus.onInvalidate(() => {
      ctx.keys.invalidate();
      ctx.routes.invalidate();
    });
    subscribeLogging(log);
    const metrics = await startMetrics(ctx);
    if (metrics) closers.push(() => metrics.stop());
    if (config.roles.includes('delivery')) {
      // Distributed-traffic counters (GET /waas/.../metrics/series) come from this node's deliveries.
      const distribution = new DistributionRecorder(backends.cache, config.waas.metricsFlushMs);
      distribution.start();
      closers.push(() => distribution.stop());
    }

    let ready = false;
    ctx.router.add('get', '/healthz', { maxBodyBytes: 0 }, (ex) => ex.sendJson(200, { status: 'ok' }));
    const openapi = openApiJson();
    ctx.router.add('get', '/openapi.json', { maxBodyBytes: 0 }, (ex) =>
      ex.send(200, openapi, { 'content-type': 'application/json' }),
    );
    ctx.router.add('get', '/readyz', { maxBodyBytes: 0 }, (ex) =>
      ready ? ex.sendJson(200, { status: 'ready', roles: config.roles }) : ex.sendJson(503, { status: 'starting' }),
    );

    // Management and ingress register routes before the port opens; delivery
    // starts consuming last, once everything it depends on is up.
    const handles: RoleHandle[] = [];
    for (const role of ['management', 'ingress'] as const) {
      if (config.roles.includes(role)) handles.push(await ROLE_STARTERS[role](ctx));
    }
    const withSink = backends.eventLog.kind === 'embedded' && config.delivery.allowLoopbackInSingleNode;
    if (withSink && config.roles.includes('management')) registerDevSink(ctx.router, config.server.maxManagementBodyBytes);
    ctx.router.fallback(config.server.maxManagementBodyBytes);

    const listener = await listenPublic(app, config.server, log);
    closers.push(() => listener.destroyConnections());
    let listening = true;
    const stopListening = () => {
      if (listening) listener.close();
      listening = false;
    };
    closers.push(stopListening);
    const port = listener.port;

    const firstRun = config.roles.includes('management') ? await firstRunBootstrap(sql, port, withSink) : null;
    if (config.roles.includes('delivery')) handles.push(await ROLE_STARTERS.delivery(ctx));
    ready = true;
    log.info({ port, roles: config.roles }, 'streamgate is serving');

    let stopping: Promise<void> | null = null;
    return {
      port,
      roles: [...config.roles],
      routes: ctx.router.routes,
      firstRun,
      configVersion: () => bus.currentVersion(),
      stop: () => {
        stopping ??= (async () => {
          ready = false;
          stopListening();
          const deadline = Date.now() + config.server.drainTimeoutMs;
          for (const handle of handles) await handle.drain(deadline);
          await closeAll();
          log.info('streamgate stopped');
        })();
        return stopping;
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
