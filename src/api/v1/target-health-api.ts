import Type, { type Static } from 'typebox';
import type { ManagementAuth } from '../../auth/management-auth.js';
import { healthState, type HealthThresholds } from '../../delivery/health/health-state.js';
import { ServiceError } from '../../errors.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Router } from '../../http/router.js';
import { nullable, oneOf } from '../../schema/schema-kit.js';
import type { TargetHealthRow, TargetHealthRepo } from '../../storage/target-health-repo.js';

export interface TargetHealthApiDeps {
  auth: ManagementAuth;
  health: TargetHealthRepo;
  thresholds: HealthThresholds;
}

const WINDOWS = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 } as const;
type Window = keyof typeof WINDOWS;
const WINDOW_NAMES = Object.keys(WINDOWS) as Window[];

const time = (description?: string) => nullable(Type.String({ format: 'date-time', ...(description ? { description } : {}) }));

/** One target's health. */
export const TargetHealthView = Type.Object(
  {
    target: Type.String({ description: "the target's name" }),
    publicId: Type.String({ pattern: '^tgt_' }),
    state: oneOf(['active', 'failing', 'warning', 'disabled'] as const),
    failingSince: time('start of the failure streak (for a disabled target: of the streak that led to it, when delivery disabled it)'),
    warnsAt: time('when a failing target becomes warning (delivery.warnAfterFailingSeconds after failingSince)'),
    disablesAt: time('when a failing target is disabled unless an attempt succeeds first'),
    disabledAt: time(),
    disabledReason: nullable(Type.String()),
    consecutiveFailures: Type.Integer({ minimum: 0, description: 'failed attempts since the last 2xx, across nodes' }),
    lastError: nullable(Type.String()),
    lastErrorAt: time(),
    lastSuccessAt: time(),
    attempts: Type.Integer({ minimum: 0, description: 'attempts in the window' }),
    successRate: nullable(Type.Number({ minimum: 0, maximum: 1, description: 'share of attempts in the window answered 2xx; null without attempts' })),
    latencyMsMean: nullable(Type.Number({ description: 'mean attempt duration in the window, ms' })),
    latencyMsMax: nullable(Type.Integer({ description: 'longest attempt in the window, ms' })),
  },
  { title: 'TargetHealth', additionalProperties: false },
);

/** `GET /v1/tenants/{tenant}/target-health`. */
export const TargetHealthListView = Type.Object(
  {
    window: oneOf(WINDOW_NAMES),
    warnAfterFailingSeconds: Type.Integer(),
    disableAfterFailingSeconds: Type.Integer(),
    items: Type.Array(TargetHealthView),
  },
  { title: 'TargetHealthList', additionalProperties: false },
);

/**
 * Target health (docs/api.md#target-health):
 *
 *   GET /v1/tenants/{tenant}/target-health?window=1h|24h|7d   every target's health, by name
 *   GET /v1/tenants/{tenant}/target-health?state=failing,warning,disabled   only those
 *
 * Counts come from the 5-minute buckets delivery writes in batches (a window
 * is whole buckets: up to 5 minutes more than asked), never the attempt records.
 */
export function registerTargetHealthApi(router: Router, deps: TargetHealthApiDeps): void {
  router.add('get', '/v1/tenants/:tenant/target-health', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const params = new URLSearchParams(ex.query);
    const window = (params.get('window') ?? '1h') as Window;
    const states = params.getAll('state').flatMap((s) => s.split(','));
    const problems: Array<{ field: string; problem: string }> = [];
    if (!(window in WINDOWS)) problems.push({ field: 'window', problem: `must be one of ${WINDOW_NAMES.join(', ')}` });
    const known = ['active', 'failing', 'warning', 'disabled'];
    if (states.some((s) => !known.includes(s))) problems.push({ field: 'state', problem: `must be among ${known.join(', ')}` });
    if (problems.length > 0) throw new ServiceError('validation_failed', 'The target health query is not valid.', problems);
    const now = Date.now();
    const rows = await deps.health.list(ws.id, new Date(now - WINDOWS[window]));
    const items = rows.map((r) => healthJson(r, deps.thresholds, now)).filter((h) => states.length === 0 || states.includes(h.state));
    const answer: Static<typeof TargetHealthListView> = {
      window,
      warnAfterFailingSeconds: Math.round(deps.thresholds.warnAfterMs / 1000),
      disableAfterFailingSeconds: Math.round(deps.thresholds.disableAfterMs / 1000),
      items,
    };
    ex.sendJson(200, answer);
  });
}

export function healthJson(r: TargetHealthRow, thresholds: HealthThresholds, now: number): Static<typeof TargetHealthView> {
  const verdict = healthState({ disabledAt: r.disabledAt, failingSince: r.failingSince }, thresholds, now);
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  // Disabling clears the shared streak start (attempts in flight may start another); the
  // streak delivery last wrote before disabling says when the trouble began.
  const failingSince = r.disabledAt !== null ? (r.streakStartedAt ?? r.failingSince) : r.failingSince;
  return {
    target: r.name,
    publicId: r.publicId,
    state: verdict.state,
    failingSince: iso(failingSince),
    warnsAt: iso(verdict.warnsAt),
    disablesAt: iso(verdict.disablesAt),
    disabledAt: iso(r.disabledAt),
    disabledReason: r.disabledReason,
    consecutiveFailures: r.consecutiveFailures,
    lastError: r.lastError,
    lastErrorAt: iso(r.lastErrorAt),
    lastSuccessAt: iso(r.lastSuccessAt),
    attempts: r.attempts,
    successRate: r.attempts > 0 ? r.succeeded / r.attempts : null,
    latencyMsMean: r.attempts > 0 ? Math.round((r.latencyMsSum / r.attempts) * 10) / 10 : null,
    latencyMsMax: r.latencyMsMax,
  };
}
