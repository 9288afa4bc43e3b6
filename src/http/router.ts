import { isServiceError, ServiceError } from '../errors.js';
import { dependencyFailure } from '../util/dependency-failure.js';
import type { Logger } from '../observability/logger.js';
import { RequestObserver } from '../observability/request-observer.js';
import type { HttpConnection } from './connection.js';
import { ServerExchange, type ConnectionLifecycle, type Exchange } from './exchange.js';
import type { RequestHead } from './parser/parsed-head.js';
import { matchesPattern, RouteTree } from './route-pattern.js';

export type Method = 'get' | 'post' | 'put' | 'del' | 'patch';
export type Handler = (exchange: Exchange) => Promise<void> | void;

export interface RouteOptions {
  maxBodyBytes: number;
  /** The schema the handler checks a JSON body with (readBody): recorded for the OpenAPI comparison. */
  body?: { readonly schema: object };
}

/** A registered route, kept so the OpenAPI test can compare against the document. */
export interface RouteInfo {
  method: string;
  pattern: string;
  /** The title of the body schema the route checks, if it takes a JSON body. */
  body: string | null;
}

/** A route's handler as registered: wrapped by the observer, with its body limit. */
interface RouteEntry {
  pattern: string;
  maxBodyBytes: number;
  handler: Handler;
}

/**
 * Finds the route of each request the connections read (src/http/connection.ts),
 * runs its handler and turns whatever the handler throws into the error
 * envelope: catalog errors keep their code, a dependency that is away
 * (src/util/dependency-failure.ts) is 503 `unavailable`, anything else is
 * logged and answered as 500 `internal` with no detail leaked.
 */
export class Router {
  readonly routes: RouteInfo[] = [];
  /** Set `closing` when the node stops listening: answers then close their connection (exchange.ts). */
  readonly lifecycle: ConnectionLifecycle = { closing: false };
  /** An outage fails every request: one log line a second says so, not one per request. */
  private unavailableLoggedAt = 0;
  private readonly byMethod = new Map<string, RouteTree<RouteEntry>>();
  private fallbackEntry: RouteEntry | null = null;

  private readonly log: Logger;
  private readonly observer: RequestObserver;
  constructor(
    log: Logger,
    /** Spans, access log and refusal lines around each handler (src/observability/request-observer.ts). */
    observer = new RequestObserver(log),
  ) {
    this.log = log;
    this.observer = observer;
  }

  add(method: Method, pattern: string, options: RouteOptions, handler: Handler): void {
    const httpMethod = method === 'del' ? 'DELETE' : method.toUpperCase();
    this.routes.push({ method: httpMethod, pattern, body: options.body ? ((options.body.schema as { title?: string }).title ?? '(untitled)') : null });
    let tree = this.byMethod.get(httpMethod);
    if (!tree) this.byMethod.set(httpMethod, (tree = new RouteTree()));
    tree.add(pattern, { pattern, maxBodyBytes: options.maxBodyBytes, handler: this.observer.wrap(httpMethod, pattern, handler) });
  }

  /**
   * Runs the route of one request the connection read (HEAD as GET, without
   * the body); what no route takes goes to the fallback.
   */
  dispatch(connection: HttpConnection, head: RequestHead, body: Buffer): void {
    const target = head.target;
    const mark = target.indexOf('?');
    const path = mark === -1 ? target : target.slice(0, mark);
    const query = mark === -1 ? '' : target.slice(mark + 1);
    const headOnly = head.method === 'HEAD';
    const method = headOnly ? 'GET' : head.method;
    const params: string[] = [];
    const found = this.byMethod.get(method)?.find(path, params) ?? null;
    const entry = found ?? this.fallbackEntry;
    if (entry === null) throw new Error('router: no fallback registered');
    const exchange = new ServerExchange(connection, head, method, path, query, found ? params : [], body, entry.maxBodyBytes, this.lifecycle, found ? entry.pattern : '', headOnly, head.close);
    connection.track(exchange);
    this.run(entry.handler, exchange);
  }

  /**
   * Answers what no route took: 405 `method_not_allowed` with `Allow` when the
   * path is served with other methods (RFC 9110 §15.5.6), else 404 `not_found`;
   * 503 `unavailable` while `starting()` (a route added later is found first:
   * the fallback only takes what no route matches).
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
    this.fallbackEntry = { pattern: '', maxBodyBytes, handler: answer };
  }

  /** The methods routes serve on `path` (HEAD wherever GET is: HEAD is answered as GET without the body). */
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
