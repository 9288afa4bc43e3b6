import uWS from 'uWebSockets.js';
import { Redis } from 'ioredis';
import type { Config, Role } from './config/schema.js';
import type { Logger } from './observability/logger.js';
import { connectDatabase, type Sql } from './storage/db.js';
import { migrate } from './storage/migrate.js';
import { KeyRepo } from './storage/key-repo.js';
import { LicenseRepo } from './storage/license-repo.js';
import { TopologyRepo } from './storage/topology-repo.js';
import { InvalidationBus } from './cache/invalidation-bus.js';
import { KeyAuthenticator } from './auth/key-authenticator.js';
import { IngressAuth } from './auth/ingress-auth.js';
import { ManagementAuth } from './auth/management-auth.js';
import { Router } from './http/router.js';
import { QueueDirectory } from './ingress/queue-directory.js';
import { postEventHandler } from './ingress/post-event.js';
import { createKafka, ensureTopic } from './log/kafka-client.js';
import { KafkaWriter } from './log/kafka-writer.js';
import { KafkaReader } from './log/kafka-reader.js';
import { RouteTable } from './routing/route-table.js';
import { SsrfGuard } from './delivery/ssrf-guard.js';
import { HttpDispatcher } from './delivery/http-dispatcher.js';
import { Deliverer } from './delivery/deliverer.js';
import { DeliverySupervisor } from './actors/delivery-supervisor.js';
import { registerConfigApi } from './management/config-api.js';
import { subscribeLogging } from './observability/log-subscriber.js';

/** A running streamgate process: its HTTP port and how to stop it gracefully. */
export interface RunningNode {
  port: number;
  roles: readonly Role[];
  stop(): Promise<void>;
}

/**
 * Builds the roles this process serves, wires them to Postgres, Redis and
 * Kafka, and starts serving. Several processes started against the same
 * backends form one cluster: the consumer group splits the partitions.
 *
 *   HTTP ──► ingress ──► Kafka topic ──► partition actors ──► receivers
 *            (auth)       (by key)        (routes, lanes)
 *   HTTP ──► management ──► Postgres ──► invalidation bus ──► every node's caches
 */
export async function startNode(config: Readonly<Config>, log: Logger): Promise<RunningNode> {
  const roles = new Set(config.roles);
  const closers: Array<() => Promise<void> | void> = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'error while closing');
      }
    }
  };

  try {
    const sql: Sql = connectDatabase(config.database.url, config.database.maxConnections);
    closers.push(() => sql.end({ timeout: 5 }));
    const applied = await migrate(sql);
    if (applied.length > 0) log.info({ applied }, 'database migrated');

    const redis = new Redis(config.redis.url, { maxRetriesPerRequest: 3, enableAutoPipelining: true });
    closers.push(() => void redis.disconnect());
    const bus = new InvalidationBus(redis, config.redis.keyPrefix, log);
    await bus.start();
    closers.push(() => bus.stop());

    const topology = new TopologyRepo(sql);
    const keys = new KeyAuthenticator(new KeyRepo(sql), config.ingress.cacheTtlMs);
    const queues = new QueueDirectory(topology, config.ingress.cacheTtlMs);
    const routes = new RouteTable(topology, config.ingress.cacheTtlMs, config.delivery.timeoutMs);
    bus.onInvalidate(() => {
      keys.invalidate();
      queues.invalidate();
      routes.invalidate();
    });
    const guard = new SsrfGuard(config.delivery.allowNetworks);
    subscribeLogging(log);

    const kafka = createKafka(config, log);
    await ensureTopic(kafka, config);

    const app = uWS.App();
    const router = new Router(app, log);
    let ready = false;
    let inFlight = 0;
    router.add('get', '/healthz', { maxBodyBytes: 0 }, (ex) => ex.sendJson(200, { status: 'ok' }));
    router.add('get', '/readyz', { maxBodyBytes: 0 }, (ex) =>
      ready ? ex.sendJson(200, { status: 'ready', roles: [...roles] }) : ex.sendJson(503, { status: 'starting' }),
    );

    let writer: KafkaWriter | null = null;
    if (roles.has('ingress')) {
      writer = new KafkaWriter(kafka, config.kafka);
      await writer.connect();
      const handle = postEventHandler({ queues, auth: new IngressAuth(keys), log: writer, keyMaxBytes: config.ingress.keyMaxBytes });
      router.add('post', '/events/:tenant/:queue', { maxBodyBytes: config.server.maxBodyBytes }, async (ex) => {
        inFlight++;
        try {
          await handle(ex);
        } finally {
          inFlight--;
        }
      });
    }
    if (roles.has('management')) {
      registerConfigApi(router, {
        auth: new ManagementAuth(keys, topology),
        topology,
        licenses: new LicenseRepo(sql),
        guard,
        bus,
        maxBodyBytes: config.server.maxManagementBodyBytes,
        defaultTimeoutMs: config.delivery.timeoutMs,
      });
    }
    router.fallback(config.server.maxManagementBodyBytes);

    const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
      app.listen(config.server.host, config.server.port, (token) =>
        token ? resolve(token) : reject(new Error(`cannot listen on ${config.server.host}:${config.server.port}`)),
      );
    });
    let listening = true;
    const stopListening = () => {
      if (listening) uWS.us_listen_socket_close(listenSocket);
      listening = false;
    };
    closers.push(stopListening);
    const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);

    let supervisor: DeliverySupervisor | null = null;
    let dispatcher: HttpDispatcher | null = null;
    if (roles.has('delivery')) {
      dispatcher = new HttpDispatcher(guard, config.delivery.maxSocketsPerOrigin, config.delivery.maxResponseBytes);
      const deliverer = new Deliverer(dispatcher, { initialMs: config.delivery.retryInitialMs, maxMs: config.delivery.retryMaxMs });
      const reader = new KafkaReader(kafka, config.kafka, config.delivery.partitionsConcurrently, log.child({ component: 'consumer' }));
      supervisor = new DeliverySupervisor(reader, routes, deliverer, {
        maxPendingPerPartition: config.delivery.maxPendingPerPartition,
        commitIntervalMs: config.delivery.commitIntervalMs,
      }, log.child({ component: 'delivery' }));
      await supervisor.start();
    }
    ready = true;
    log.info({ port, roles: [...roles] }, 'streamgate is serving');

    let stopping: Promise<void> | null = null;
    return {
      port,
      roles: [...roles],
      stop: () => {
        stopping ??= (async () => {
          ready = false;
          stopListening();
          const until = Date.now() + config.server.drainTimeoutMs;
          while (inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
          await writer?.close();
          await supervisor?.drain(Math.max(0, until - Date.now()));
          dispatcher?.close();
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
