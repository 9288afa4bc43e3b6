import { createHash, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import { listenPublic } from '../http/listen.js';
import { Router } from '../http/router.js';
import type { Logger } from './logger.js';

const CHALLENGE = { 'www-authenticate': 'Bearer realm="metrics"' };

/**
 * GET /metrics in the Prometheus text format. With a token, only
 * `Authorization: Bearer <token>` is answered; the comparison runs over
 * digests of equal length in constant time, so timing tells nothing about
 * the token's length or prefix.
 */
/** What /metrics reads: a registry, or a threaded node's view of all its threads. */
export interface MetricsText {
  metrics(): Promise<string>;
  readonly contentType: string;
}

export function metricsHandler(registry: MetricsText, token: string) {
  const expected = token === '' ? null : digest(token);
  return async (ex: Exchange): Promise<void> => {
    if (expected !== null) {
      const header = ex.headers.authorization ?? '';
      const given = /^Bearer +(\S+)$/i.exec(header)?.[1];
      if (given === undefined || !timingSafeEqual(digest(given), expected)) {
        ex.sendError(new ServiceError('unauthorized', 'GET /metrics requires the bearer token configured as metrics.token.'), CHALLENGE);
        return;
      }
    }
    const text = await registry.metrics();
    ex.send(200, text, { 'content-type': registry.contentType });
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** A private listener that serves only GET /metrics (server.metricsPort). */
export interface MetricsListener {
  port: number;
  close(): void;
}

export async function listenMetrics(registry: MetricsText, token: string, host: string, port: number, log: Logger): Promise<MetricsListener> {
  const router = new Router(log);
  router.add('get', '/metrics', { maxBodyBytes: 0 }, metricsHandler(registry, token));
  router.fallback(1024);
  // A scraper's connections: the public port's deadlines, no body worth the name, no balancer in front.
  const listener = await listenPublic(router, {
    host,
    port,
    maxBodyBytes: 1024,
    maxManagementBodyBytes: 1024,
    proxyProtocolFrom: [],
    headTimeoutMs: 10_000,
    bodyTimeoutMs: 10_000,
    idleTimeoutMs: 60_000,
  });
  return {
    port: listener.port,
    close: () => {
      listener.close();
      listener.destroyConnections();
    },
  };
}
