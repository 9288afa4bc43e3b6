import type { Config, Role } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { connectDatabase } from '../storage/db.js';
import { migrate } from '../storage/migrate.js';
import { RetentionRepo } from '../storage/retention-repo.js';
import { ensurePartitionsAtStart, RetentionSweep, retentionOptions } from '../jobs/retention-sweep.js';
import { KeyRepo } from '../storage/key-repo.js';
import { TopologyRepo } from '../storage/topology-repo.js';
import { InvalidationBus } from '../cache/invalidation-bus.js';
import { openBackends } from './backends.js';
import { KeyUsage } from '../auth/key-usage.js';
import { KeyAuthenticator } from '../auth/key-authenticator.js';
import { Router, type RouteInfo } from '../http/router.js';
import { listenPublic, type PublicListener } from '../http/listen.js';
import { RouteTable } from '../routing/route-table.js';
import { SsrfGuard } from '../delivery/http/ssrf-guard.js';
import { subscribeLogging } from '../observability/log-subscriber.js';
import { openApiJson } from '../api/openapi.js';
import { registerDevSink } from '../api/dev-sink.js';
import { firstRunBootstrap, type FirstRunInfo } from '../api/setup/first-run.js';
import type { NodeContext, RoleHandle } from './node-context.js';
import { startIngressRole } from '../ingress/ingress-role.js';
import { startDeliveryRole } from '../delivery/delivery-role.js';
import { startManagementRole } from '../api/management-role.js';
import { RoutingGate } from '../routing/routing-gate.js';
import { WaasGateRepo } from '../storage/waas-gate-repo.js';
import { DistributionRecorder } from '../observability/distribution-metrics.js';
import { Readiness } from '../observability/readiness.js';
import { registerHealthRoutes } from '../observability/health-routes.js';
import { addDependencyChecks, dependencyWaits } from './node-dependencies.js';
import { startTracing } from '../observability/tracing-start.js';
import type { TracingOptions } from '../observability/tracing.js';
import { RequestObserver } from '../observability/request-observer.js';
import { withDeadline } from '../storage/db-deadline.js';
import { abortable } from '../util/abortable.js';
import { drainNode } from './node-drain.js';
import { closeInReverse, type Closer } from './close-in-reverse.js';
import { MetricSources } from '../observability/metric-sources.js';
import { startMetrics, type ProcessMetrics } from '../observability/node-metrics.js';
import { startStats } from '../stats/start-stats.js';

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
  /** What /readyz answers; `readiness.setDraining()` turns it to 503 `draining`. */
  readiness: Readiness;
  /** Stops at once: not ready, listener closed, in-flight work finished (tests, errors). */
  stop(): Promise<void>;
  /** The graceful shutdown of SIGTERM: reports not-ready for server.drainDelayMs first (src/node/node-drain.ts). */
  drain(): Promise<void>;
}

/** A process that listens (health probes answer) while its roles come up. */
export interface ListeningNode {
  port: number;
  roles: readonly Role[];
  readiness: Readiness;
  /**
   * Resolves once every role is up. Rejects when the start cannot succeed
   * (a misconfiguration: refused login, untrusted certificate, unreadable
   * file); the node has stopped by then. A dependency that is merely away is
   * waited for, with /readyz naming it.
   */
  up: Promise<RunningNode>;
  /** Stops at once (see RunningNode.stop). */
  stop(): Promise<void>;
  /** The graceful shutdown of SIGTERM (see RunningNode.drain). */
  drain(): Promise<void>;
}

/** What a caller may add to a node beyond its configuration (tests inject a span exporter). */
export interface NodeOptions {
  tracing?: TracingOptions;
  /** Opens the HTTP port (default listenPublic); a threaded node's threads share one (src/node/threads/). */
  listen?: (router: Router, server: Readonly<Config['server']>) => Promise<PublicListener>;
  /** What GET /metrics reads: a threaded node answers for every thread (src/node/threads/thread-metrics.ts). */
  processMetrics?: ProcessMetrics;
  /** Runs after in-flight work finished, before the port and backends close (a threaded node's other threads finish first). */
  beforeRelease?: () => Promise<void>;
  /**
   * Resolves when the delivery role may join the consumer group. A threaded
   * node's threads join together (src/node/threads/consume-barrier.ts): one
   * rebalance at start instead of one per thread, each sending again what
   * the previous owner had in flight.
   */
  beforeConsuming?: () => Promise<void>;
}

const ROLE_STARTERS: Record<Role, (ctx: NodeContext) => Promise<RoleHandle>> = {
  management: startManagementRole,
  ingress: startIngressRole,
  delivery: startDeliveryRole,
};

/**
 * Starts a node and resolves once every role is up (what tests and embedders
 * want: use the node right away). Rejects on a misconfiguration, with nothing
 * left open. See listenNode for a node that answers probes while it waits.
 */
/** How long stopping waits for one resource to close (pool, client, listener) before leaving it behind. */
const CLOSE_WAIT_MS = 10_000;

export async function startNode(config: Readonly<Config>, log: Logger, options: NodeOptions = {}): Promise<RunningNode> {
  return (await listenNode(config, log, options)).up;
}

/**
 * Opens the HTTP port first (/livez, /healthz, /readyz, /openapi.json answer
 * at once; every other route 503 `unavailable` until the roles are up), then
 * connects the backends, waiting out any that is not there yet (backoff,
 * /readyz naming it), starts the roles this process serves and registers
 * their routes. Several processes started against the same backends form one
 * cluster: the consumer group splits the partitions, management writes reach
 * every node's caches through the invalidation bus.
 *
 *   HTTP ──► ingress ──► Kafka topic ──► partition actors ──► receivers
 *   HTTP ──► management ──► Postgres ──► invalidation bus ──► every node's caches
 */
export async function listenNode(config: Readonly<Config>, log: Logger, options: NodeOptions = {}): Promise<ListeningNode> {
  const closers: Closer[] = [];
  const closeAll = () => closeInReverse(closers, CLOSE_WAIT_MS, log);


  // Closed last: the spans of the drain are exported too.
  const tracing = await startTracing(log, options.tracing);
  closers.push(() => tracing.stop());
  const router = new Router(log, new RequestObserver(log, tracing, config.log.accessLog.sampleRate));
  const readiness = new Readiness(config.roles, config.health, log);
  closers.push(() => readiness.stop());
  registerHealthRoutes(router, readiness);
  const openapi = openApiJson();
  router.add('get', '/openapi.json', { maxBodyBytes: 0 }, (ex) =>
    ex.send(200, openapi, { 'content-type': 'application/json' }),
  );
  let rolesUp = false;
  router.fallback(config.server.maxManagementBodyBytes, () => !rolesUp);

  let listener: PublicListener;
  try {
    listener = await (options.listen ?? listenPublic)(router, config.server);
  } catch (err) {
    await closeAll();
    throw err;
  }
  closers.push(() => listener.destroyConnections());
  let listening = true;
  const stopListening = () => {
    if (listening) listener.close();
    listening = false;
  };
  closers.push(stopListening);
  const port = listener.port;

  // Aborted by stop(): a start still waiting for a dependency gives up.
  const aborted = new AbortController();
  const handles: RoleHandle[] = [];

  const bringUp = async () => {
    const backends = await openBackends(config, log);
    closers.push(() => backends.close());
    const waitFor = dependencyWaits(backends, readiness, aborted.signal, log);
    // The checks run from now on, so /readyz names a dependency the start waits for.
    closers.push(addDependencyChecks(readiness, backends, config));
    readiness.start();

    const pool = connectDatabase(backends.databaseUrl, config.database.maxConnections, config.database.connectTimeoutMs);
    closers.push(() => pool.end({ timeout: 5 }));
    const applied = await waitFor.postgres(() => migrate(pool));
    // What HTTP requests await gives up after requestTimeoutMs (503); delivery keeps the plain pool.
    const sql = withDeadline(pool, config.database.requestTimeoutMs);
    if (applied.length > 0) log.info({ applied }, 'database migrated');
    // Time partitions of the per-event tables exist before this node writes a row (migration 070).
    const retention = new RetentionRepo(pool);
    await waitFor.postgres(() => ensurePartitionsAtStart(retention, retentionOptions(config), log));

    const bus = new InvalidationBus(backends.cache);
    await waitFor.redis(() => bus.start());
    closers.push(() => bus.stop());

    const topology = new TopologyRepo(sql);
    const keyRepo = new KeyRepo(sql);
    const keyUsage = new KeyUsage((keyIds) => keyRepo.touch(keyIds), log);
    // Before sql.end (closers run in reverse): the last notes are written first.
    closers.push(() => keyUsage.stop());
    const ctx: NodeContext = {
      config,
      log,
      sql,
      backgroundSql: pool,
      cache: backends.cache,
      bus,
      eventLog: backends.eventLog,
      singleNode: backends.singleNode,
      router,
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
      tracing,
      metrics: new MetricSources(),
    };
    bus.onInvalidate(() => {
      ctx.keys.invalidate();
      ctx.routes.invalidate();
    });
    subscribeLogging(log);
    const metrics = await startMetrics(ctx, options.processMetrics);
    if (metrics) closers.push(() => metrics.stop());
    if (config.roles.includes('delivery')) {
      // Distributed-traffic counters (GET /waas/.../metrics/series) come from this node's deliveries.
      const distribution = new DistributionRecorder(backends.cache, config.waas.metricsFlushMs);
      distribution.start();
      closers.push(() => distribution.stop());
    }
    // The workspace overview's traffic rollups (issue 26), counted from the same channels.
    const stats = startStats(ctx);
    if (stats) closers.push(stats);

    // Every role, as before: management's event lookups read the topic too.
    await waitFor.kafka(() => backends.eventLog.prepare());
    // Management and ingress register their routes (the fallback answers 503 until
    // rolesUp); delivery starts consuming last, once everything it depends on is up.
    if (config.roles.includes('management')) {
      handles.push(await ROLE_STARTERS.management(ctx));
      const sweep = new RetentionSweep(retention, retentionOptions(config), log);
      sweep.start();
      closers.push(() => sweep.stop());
      ctx.metrics.retention = sweep;
    }
    // The writer connects first thing: a broker gone again meanwhile is waited out, nothing registered twice.
    if (config.roles.includes('ingress')) handles.push(await waitFor.kafka(() => ROLE_STARTERS.ingress(ctx)));
    const withSink = backends.eventLog.kind === 'embedded' && config.delivery.allowLoopbackInSingleNode;
    if (withSink && config.roles.includes('management')) registerDevSink(ctx.router, config.server.maxManagementBodyBytes);

    const firstRun = config.roles.includes('management') ? await waitFor.postgres(() => firstRunBootstrap(pool, port, withSink)) : null;
    // Joins the consumer group; a broker away at that moment is waited out by the reader (readiness shows it).
    if (config.roles.includes('delivery')) {
      if (options.beforeConsuming) await abortable(options.beforeConsuming(), aborted.signal);
      handles.push(await ROLE_STARTERS.delivery(ctx));
    }
    for (const handle of handles) for (const [name, check] of Object.entries(handle.checks ?? {})) readiness.add(name, check);
    rolesUp = true;
    readiness.started();
    await readiness.refresh();
    log.info({ port, roles: config.roles }, 'streamgate is serving');
    return { firstRun, bus };
  };

  let stopping: Promise<void> | null = null;
  const started = bringUp();
  const shutdown = (delayMs: number) =>
    (stopping ??= drainNode(
      {
        // /readyz answers 503 `draining` from here on, whatever the checks say (no more
        // rounds: the backends are about to close); a start still waiting for a dependency gives up.
        markDraining: () => {
          readiness.setDraining();
          readiness.stop();
          aborted.abort();
        },
        stopAccepting: () => {
          router.lifecycle.closing = true;
          stopListening();
        },
        finish: async (deadline) => {
          // First the connections: once none is open no request can arrive
          // after ingress has finished its last append.
          await listener.drainConnections(deadline);
          await started.catch(() => {});
          for (const handle of handles) await handle.drain(deadline);
        },
        release: async () => {
          await options.beforeRelease?.().catch((err: unknown) => log.warn({ err }, 'error while stopping the other threads'));
          await closeAll();
          log.info('streamgate stopped');
        },
      },
      // A node that is not up yet has no traffic to let a load balancer move away.
      { delayMs: rolesUp ? delayMs : 0, shutdownTimeoutMs: config.server.shutdownTimeoutMs },
      log,
    ));
  const stop = () => shutdown(0);
  const drain = () => shutdown(config.server.drainDelayMs);
  const up = started.then(
    ({ firstRun, bus }): RunningNode => ({
      port,
      roles: [...config.roles],
      routes: router.routes,
      firstRun,
      readiness,
      configVersion: () => bus.currentVersion(),
      stop,
      drain,
    }),
    async (err: unknown) => {
      // Nothing may stay open when start fails: the caller may have no handle to close.
      await stop();
      throw err;
    },
  );
  log.info({ port, roles: config.roles, node: process.version }, 'listening; starting the roles');
  return { port, roles: [...config.roles], readiness, up, stop, drain };
}
