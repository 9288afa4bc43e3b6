import { ServiceError } from '../errors.js';
import type { Sql } from './db.js';

/**
 * The pool as request handlers see it: every query (and every transaction)
 * an HTTP request awaits gives up after `ms` with 503 `unavailable`.
 *
 * A database that went silent (a dead host, a partition: TCP up, no reply)
 * raises no error at all: a query on a pooled connection, or one waiting for
 * a connection held by such a query, would wait until the kernel gives up on
 * the socket (many seconds to minutes). A request must answer long before
 * that, so the caller stops waiting; the query itself runs on (postgres.js
 * cannot take a sent query back) and fails when the link is found dead.
 *
 * Only request paths use this. Delivery keeps the plain pool: it retries its
 * own writes, and a write abandoned here while it still commits would be
 * written twice.
 *
 * postgres.js queries are lazy: one runs when first awaited (`then`), and a
 * fragment nested in another query is never awaited. So the clock starts in
 * `then`, which leaves fragments and helpers untouched.
 */
export function withDeadline(sql: Sql, ms: number): Sql {
  const late = () => new ServiceError('unavailable', 'The database did not answer in time; retry later.');
  const bound = <T>(pending: T): T => {
    if (!(pending instanceof Promise)) return pending;
    const run = pending.then.bind(pending);
    Object.defineProperty(pending, 'then', {
      configurable: true,
      value: (onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) => {
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(late()), ms);
        });
        const result = run();
        result.catch(() => {}); // lost the race: nobody else awaits it
        return Promise.race([result, deadline])
          .finally(() => clearTimeout(timer))
          .then(onFulfilled, onRejected);
      },
    });
    return pending;
  };
  return new Proxy(sql, {
    apply: (target, thisArg, args) => bound(Reflect.apply(target, thisArg, args)),
    get: (target, prop, receiver) => {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (prop !== 'unsafe' && prop !== 'begin' && prop !== 'file') return value;
      const fn = value as (...a: unknown[]) => unknown;
      return (...args: unknown[]) => bound(fn.apply(target, args));
    },
  });
}
