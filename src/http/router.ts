import type { TemplatedApp } from 'uWebSockets.js';
import { isServiceError, ServiceError } from '../errors.js';
import { dependencyFailure } from '../util/dependency-failure.js';
import type { Logger } from '../observability/logger.js';
import { RequestObserver } from '../observability/request-observer.js';
import { ClientAddressSource } from './client-address.js';
import { captureExchange, type ConnectionLifecycle, type Exchange } from './exchange.js';
import { matchesPattern } from './route-pattern.js';

export type Method = 'get' | 'post' | 'put' | 'del' | 'patch';
export type Handler = (exchange: Exchange) => Promise<void> | void;

export interface RouteOptions {
  maxBodyBytes: number;
}

/** A registered route, kept so the OpenAPI test can compare against the document. */
export interface RouteInfo {
  method: string;
  pattern: string;
}

/**
 * Registers routes on the uWS app and turns whatever a handler throws into the
 * error envelope: catalog errors keep their code, a dependency that is away
 * (src/util/dependency-failure.ts) is 503 `unavailable`, anything else is
 * logged and answered as 500 `internal` with no detail leaked.
 */
export class Router {
  readonly routes: RouteInfo[] = [];
  /** Set `closing` when the node stops listening: answers then close their connection (exchange.ts). */
  readonly lifecycle: ConnectionLifecycle = { closing: false };
  /** An outage fails every request: one log line a second says so, not one per request. */
  private unavailableLoggedAt = 0;

  constructor(
    private readonly app: TemplatedApp,
    private readonly log: Logger,
    /** Where the client address comes from (the header guard's front, or the socket and trusted proxies). */
    private readonly addresses = new ClientAddressSource(false),
    /** Spans, access log and refusal lines around each handler (src/observability/request-observer.ts). */
    private readonly observer = new RequestObserver(log),
  ) {}

  add(method: Method, pattern: string, options: RouteOptions, handler: Handler): void {
    const paramCount = (pattern.match(/\/:/g) ?? []).length;
    const httpMethod = method === 'del' ? 'DELETE' : method.toUpperCase();
    this.routes.push({ method: httpMethod, pattern });
    const observed = this.observer.wrap(httpMethod, pattern, handler);
    this.app[method](pattern, (res, req) => {
      this.run(observed, captureExchange(res, req, paramCount, options.maxBodyBytes, this.addresses, this.lifecycle, pattern));
    });
  }

  /**
   * Answers what no route took: 405 `method_not_allowed` with `Allow` when the
   * path is served with other methods (RFC 9110 §15.5.6), else 404 `not_found`;
   * 503 `unavailable` while `starting()` (routes added later take precedence:
   * uWS matches the most specific pattern, whatever the order).
   */
  fallback(maxBodyBytes: number, starting: () => boolean = () => false): void {
    const answer = this.observer.wrap('HTTP', '(no route)', (exchange) => {
      // The port opens before the roles are up (they wait for their backends): their routes are not registered yet.
      if (starting()) {
        exchange.sendError(new ServiceError('unavailable', 'This node is starting; retry shortly (GET /readyz says what it waits for).'), { 'retry-after': '1' });
        return;
      }
      const allowed = this.methodsFor(exchange.path);
      if (allowed.length > 0) {
        exchange.sendError(new ServiceError('method_not_allowed', `${exchange.path} does not take ${exchange.method}; it takes ${allowed.join(', ')}.`), { allow: allowed.join(', ') });
        return;
      }
      exchange.sendError(new ServiceError('not_found', `No route for ${exchange.method} ${exchange.path}.`));
    });
    this.app.any('/*', (res, req) => this.run(answer, captureExchange(res, req, 0, maxBodyBytes, this.addresses, this.lifecycle)));
  }

  /** The methods routes serve on `path` (HEAD wherever GET is: the front answers HEAD as GET). */
  private methodsFor(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) if (matchesPattern(route.pattern, path)) methods.add(route.method);
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }

  private run(handler: Handler, exchange: Exchange): void {
    try {
      const result = handler(exchange);
      if (result) result.catch((err: unknown) => this.fail(exchange, err));
    } catch (err) {
      this.fail(exchange, err);
    }
  }

  private fail(exchange: Exchange, err: unknown): void {
    if (isServiceError(err)) {
      exchange.sendError(err);
      return;
    }
    // Postgres or Redis away: the client may retry, and nothing is wrong with our code.
    const unavailable = dependencyFailure(err);
    if (unavailable) {
      const now = Date.now();
      if (now - this.unavailableLoggedAt >= 1_000) {
        this.unavailableLoggedAt = now;
        this.log.warn({ err, reqId: exchange.requestId, method: exchange.method, path: exchange.path }, 'dependency unavailable: answering 503');
      }
      exchange.sendError(unavailable);
      return;
    }
    this.log.error({ err, reqId: exchange.requestId, method: exchange.method, path: exchange.path }, 'unhandled error');
    exchange.sendError(new ServiceError('internal'));
  }
}
