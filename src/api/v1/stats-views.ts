/**
 * What `GET /v1/tenants/{tenant}/stats` answers (docs/console-api.md#stats):
 * the schema the OpenAPI document shows (components.schemas Stats) and that
 * the report built in src/stats/stats-report.ts must fit.
 */
import Type from 'typebox';
import { nullable, oneOf } from '../../schema/schema-kit.js';
import { ATTEMPT_CLASSES } from '../../stats/stats-report.js';
import { STATS_WINDOWS, type StatsWindow } from '../../stats/stats-window.js';

const count = (description?: string) => Type.Number({ minimum: 0, ...(description ? { description } : {}) });
const latency = (q: string) => nullable(Type.Number({ minimum: 0, description: `accept→deliver latency ${q} of the delivered ones, ms (±19 %: log-scale buckets); null without deliveries` }));

const COUNTS = {
  accepted: count('events accepted at ingress (idempotent replays and sandbox events not counted)'),
  delivered: count('deliveries (event × target) delivered'),
  retrying: count('attempts that failed and will be retried'),
  failed: count('deliveries that failed for good (4xx, 410, no retry left)'),
  latencyP50Ms: latency('p50'),
  latencyP99Ms: latency('p99'),
};

const classes = () => Object.fromEntries(ATTEMPT_CLASSES.map((c) => [c, count()])) as Record<(typeof ATTEMPT_CLASSES)[number], ReturnType<typeof count>>;

const StatsPoint = Type.Object({ t: Type.String({ format: 'date-time', description: 'start of the step' }), ...COUNTS }, { additionalProperties: false });

const StatsTotals = Type.Object(
  {
    ...COUNTS,
    attempts: Type.Object({ ...classes(), total: count() }, { additionalProperties: false, description: 'attempts by what came back: 2xx…5xx, a missed deadline (timeout), no answer otherwise (network)' }),
    attemptShares: Type.Object(classes(), { additionalProperties: false, description: "each class's share of the attempts, 0…1 (all 0 without attempts)" }),
  },
  { additionalProperties: false },
);

const series = { totals: StatsTotals, series: Type.Array(StatsPoint, { description: 'every step of the window, oldest first, zero-filled' }) };

export const StatsView = Type.Object(
  {
    window: oneOf(Object.keys(STATS_WINDOWS) as StatsWindow[]),
    stepSeconds: Type.Unsafe<number>({ type: 'integer', enum: Object.values(STATS_WINDOWS).map((w) => w.stepSeconds), description: "the window's step: 60, 600 or 3600 s" }),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time', description: 'end of the current step (exclusive)' }),
    queue: nullable(Type.String({ description: 'the queue asked for; null: every queue' })),
    total: Type.Object(series, { additionalProperties: false, description: 'every queue of the workspace together (or the one asked for)' }),
    queues: Type.Array(Type.Object({ name: Type.String(), ...series }, { additionalProperties: false }), { description: 'each queue with traffic in the window, busiest first' }),
  },
  { title: 'Stats', additionalProperties: false },
);
