import { SpanStatusCode } from '@opentelemetry/api';
import { isServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import type { Logger } from './logger.js';
import { validTraceparent, validTracestate } from './trace-context.js';
import { endWithStatus, NO_TRACING, type Tracing } from './tracing.js';

type RouteHandler = (exchange: Exchange) => Promise<void> | void;

/** Ingress routes: traced, never in the access log (which is for the management API). */
const INGRESS_ROUTE = /^\/events\//;
/** Probes and scrapes, every few seconds from every load balancer: neither traced nor access-logged. */
const PROBE_ROUTE = /^\/(healthz|livez|readyz|metrics)$/;

/**
 * What the router adds around every route's handler (src/http/router.ts):
 *
 *   server span (tracing on) ─► handler ─► span status, debug line for a refusal,
 *                                          sampled access-log line (management routes)
 *
 * When none of these is on (tracing off, access log at 0, level above debug)
 * `wrap` gives the handler back unchanged: the hot path pays nothing.
 * Every line carries the request's `reqId` (its X-Request-Id); none carries a
 * header, a query string or a body, where credentials travel.
 */
export class RequestObserver {
  private readonly log: Logger;

  private readonly tracing: Tracing;
  private readonly accessSampleRate: number;
  constructor(
    log: Logger,
    tracing: Tracing = NO_TRACING,
    /** log.accessLog.sampleRate: the share of management requests logged (0 = none, 1 = all). */
    accessSampleRate = 0,
  ) {
    this.tracing = tracing;
    this.accessSampleRate = accessSampleRate;
    this.log = log.child({ component: 'http' });
  }

  wrap(method: string, pattern: string, handler: RouteHandler): RouteHandler {
    const probe = PROBE_ROUTE.test(pattern);
    const tracing = probe ? NO_TRACING : this.tracing;
    const rate = INGRESS_ROUTE.test(pattern) || probe ? 0 : this.accessSampleRate;
    const debug = this.log.isLevelEnabled('debug');
    if (!tracing.enabled && rate === 0 && !debug) return handler;
    const log = this.log;
    const name = `${method} ${pattern}`;
    return async (ex) => {
      const started = performance.now();
      let span = null;
      if (tracing.enabled) {
        const parent = validTraceparent(ex.headers.traceparent);
        span = tracing.startRequest(ex, name, parent, parent === null ? null : validTracestate(ex.headers.tracestate), {
          'http.request.method': ex.method,
          'http.route': pattern,
          'streamgate.request_id': ex.requestId,
        });
      }
      let status = 0;
      let code: string | undefined;
      try {
        await handler(ex);
        status = ex.status;
      } catch (err) {
        // The router answers what was thrown (src/http/router.ts): the same status here.
        status = isServiceError(err) ? err.status : 500;
        code = isServiceError(err) ? err.code : 'internal';
        if (span && !isServiceError(err)) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        throw err;
      } finally {
        if (span) endWithStatus(span, status, 500);
        if (status >= 400 && debug) log.debug({ reqId: ex.requestId, method: ex.method, route: pattern, status, code }, 'request refused');
        if (rate > 0 && (rate >= 1 || Math.random() < rate)) {
          log.info({ reqId: ex.requestId, method: ex.method, route: pattern, status, durationMs: Math.round((performance.now() - started) * 10) / 10 }, 'request');
        }
      }
    };
  }
}
