import { ServiceError } from '../../errors.js';
import type { Router } from '../../http/router.js';
import { readDistributionSeries } from '../../observability/distribution-metrics.js';
import { HISTORIES, isHistory } from '../../observability/distribution-series.js';
import { param, type WaasDeps } from './waas-context.js';
import type { DistributionSeriesView } from './waas-views.js';
import type { Static } from 'typebox';

const ALLOWED = Object.keys(HISTORIES).join(', ');

/** GET /waas/producer/{tenant}/metrics/series?history=1h|24h|7d (docs/api.md#producer-api-waas). */
export function registerWaasMetrics(router: Router, deps: WaasDeps): void {
  router.add('get', '/waas/producer/:tenant/metrics/series', { maxBodyBytes: 0 }, async (ex) => {
    const ws = await deps.auth.waasWorkspace(await deps.auth.authenticateCaller(ex), param(ex, 0), 'read');
    const query = new URLSearchParams(ex.query);
    const history = query.getAll('history');
    if (history.length !== 1 || !isHistory(history[0]!)) {
      throw new ServiceError('validation_failed', `history must be one of ${ALLOWED}.`, [{ field: 'history', problem: `must be one of ${ALLOWED}` }]);
    }
    const answer: Static<typeof DistributionSeriesView> = await readDistributionSeries(deps.cache, ws.publicId, history[0]);
    ex.sendJson(200, answer);
  });
}
