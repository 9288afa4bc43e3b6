import type { Router } from '../http/router.js';
import type { Readiness } from './readiness.js';

/**
 * The probes a load balancer or orchestrator asks:
 *
 * - `GET /livez`: 200 while the process serves HTTP. No dependency is looked
 *   at: a node whose database is away is alive, only not ready, and must not
 *   be restarted for it. `GET /healthz` is the same (kept: probes point at it).
 * - `GET /readyz`: 200 `ready` when every check passed in the last round and
 *   every role is up, else 503 `not_ready` (or `draining` during shutdown),
 *   with each check's state in the body. Answered from the cached round.
 */
export function registerHealthRoutes(router: Router, readiness: Readiness): void {
  const alive = { status: 'ok' };
  router.add('get', '/livez', { maxBodyBytes: 0 }, (ex) => ex.sendJson(200, alive));
  router.add('get', '/healthz', { maxBodyBytes: 0 }, (ex) => ex.sendJson(200, alive));
  router.add('get', '/readyz', { maxBodyBytes: 0 }, (ex) => {
    const report = readiness.report();
    ex.sendJson(report.status === 'ready' ? 200 : 503, report);
  });
}
