import type { Static } from 'typebox';
import type { ManagementAuth } from '../../auth/management-auth.js';
import { ServiceError } from '../../errors.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Router } from '../../http/router.js';
import type { Sql } from '../../storage/db.js';
import { RollupRepo } from '../../stats/rollup-repo.js';
import { statsReport } from '../../stats/stats-report.js';
import { isStatsWindow, STATS_WINDOWS, windowBounds } from '../../stats/stats-window.js';
import type { StatsView } from './stats-views.js';

const ALLOWED = Object.keys(STATS_WINDOWS).join(', ');

/**
 * The workspace's traffic at a glance (docs/console-api.md#stats), read from
 * the rollups (migration 100), never the per-attempt records:
 *
 *   GET /v1/tenants/{tenant}/stats?window=1h|24h|7d[&queue=NAME]
 *
 * Any caller that may read the workspace (every key profile, every console role).
 */
export function registerStatsApi(router: Router, deps: { auth: ManagementAuth; sql: Sql; now?: () => number }): void {
  const rollups = new RollupRepo(deps.sql);
  const now = deps.now ?? Date.now;
  router.add('get', '/v1/tenants/:tenant/stats', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const query = new URLSearchParams(ex.query);
    const windows = query.getAll('window');
    const window = windows.length === 0 ? '1h' : windows[0]!;
    if (windows.length > 1 || !isStatsWindow(window)) {
      throw new ServiceError('validation_failed', `window must be one of ${ALLOWED}.`, [{ field: 'window', problem: `must be one of ${ALLOWED}` }]);
    }
    const queues = query.getAll('queue');
    if (queues.length > 1 || queues[0] === '') {
      throw new ServiceError('validation_failed', 'queue names one queue.', [{ field: 'queue', problem: 'must be one queue name' }]);
    }
    const queue = queues[0] ?? null;
    const { fromS, toS } = windowBounds(window, now());
    const rows = await rollups.rows(STATS_WINDOWS[window].table, ws.id, fromS, toS, queue);
    const answer: Static<typeof StatsView> = statsReport(window, fromS, toS, queue, rows);
    ex.sendJson(200, answer);
  });
}
