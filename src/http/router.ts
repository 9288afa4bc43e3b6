import type { TemplatedApp } from 'uWebSockets.js';
import { isServiceError, ServiceError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { ClientAddressSource } from './client-address.js';
import { captureExchange, type Exchange } from './exchange.js';
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
 * error envelope: catalog errors keep their code, anything else is logged and
 * answered as 500 `internal` with no detail leaked.
 */
export class Router {
  readonly routes: RouteInfo[] = [];

  constructor(
    private readonly app: TemplatedApp,
    private readonly log: Logger,
    /** Where the client address comes from (the header guard's front, or the socket and trusted proxies). */
    private readonly addresses = new ClientAddressSource(false),
  ) {}

  add(method: Method, pattern: string, options: RouteOptions, handler: Handler): void {
    const paramCount = (pattern.match(/\/:/g) ?? []).length;
    this.routes.push({ method: method === 'del' ? 'DELETE' : method.toUpperCase(), pattern });
    this.app[method](pattern, (res, req) => {
      this.run(handler, captureExchange(res, req, paramCount, options.maxBodyBytes, this.addresses, pattern));
    });
  }

  /**
   * Answers what no route took: 405 `method_not_allowed` with `Allow` when the
   * path is served with other methods (RFC 9110 §15.5.6), else 404 `not_found`.
   */
  fallback(maxBodyBytes: number): void {
    this.app.any('/*', (res, req) => {
      const exchange = captureExchange(res, req, 0, maxBodyBytes, this.addresses);
      const allowed = this.methodsFor(exchange.path);
      if (allowed.length > 0) {
        exchange.sendError(new ServiceError('method_not_allowed', `${exchange.path} does not take ${exchange.method}; it takes ${allowed.join(', ')}.`), { allow: allowed.join(', ') });
        return;
      }
      exchange.sendError(new ServiceError('not_found', `No route for ${exchange.method} ${exchange.path}.`));
    });
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
    this.log.error({ err, method: exchange.method, path: exchange.path }, 'unhandled error');
    exchange.sendError(new ServiceError('internal'));
  }
}
