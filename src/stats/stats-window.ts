import type { RollupTable } from './rollup-repo.js';

/**
 * The windows GET /v1/tenants/{tenant}/stats answers, the step of their
 * points and the table whose rows are those steps: 1 h in minutes (60
 * points), 24 h in 10 minutes (144), 7 d in hours (168). A window reads one
 * row per queue and point, whatever the traffic.
 */
export const STATS_WINDOWS = {
  '1h': { seconds: 3_600, stepSeconds: 60, table: 'stats_minute' },
  '24h': { seconds: 86_400, stepSeconds: 600, table: 'stats_ten_minutes' },
  '7d': { seconds: 604_800, stepSeconds: 3_600, table: 'stats_hour' },
} as const satisfies Record<string, { seconds: number; stepSeconds: number; table: RollupTable }>;

export type StatsWindow = keyof typeof STATS_WINDOWS;

export function isStatsWindow(value: string): value is StatsWindow {
  return Object.hasOwn(STATS_WINDOWS, value);
}

/**
 * [from, to) of a window ending now, in epoch seconds: `to` is the end of the
 * step now is in (the current, still filling point is the last one).
 */
export function windowBounds(window: StatsWindow, nowMs: number): { fromS: number; toS: number } {
  const { seconds, stepSeconds } = STATS_WINDOWS[window];
  const toS = (Math.floor(nowMs / 1000 / stepSeconds) + 1) * stepSeconds;
  return { fromS: toS - seconds, toS };
}
