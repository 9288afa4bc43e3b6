/**
 * A target's health state (docs/delivery.md#target-health), from what is on
 * its row and the two thresholds:
 *
 *   active ──first failed attempt──► failing ──warnAfter──► warning ──disableAfter──► disabled
 *     ▲                                 │                      │                         │
 *     └──────────── any 2xx ────────────┴──────────────────────┘       POST …/enable ────┘
 *
 * The streak start (failingSince) is shared by every node (targets.failing_since);
 * a 410 Gone disables at once, from any state.
 */
export type HealthState = 'active' | 'failing' | 'warning' | 'disabled';

export interface HealthFacts {
  disabledAt: Date | null;
  /** Start of the current failure streak; null: the last attempt succeeded (or none was made). */
  failingSince: Date | null;
}

export interface HealthThresholds {
  warnAfterMs: number;
  disableAfterMs: number;
}

export interface HealthVerdict {
  state: HealthState;
  /** When a failing target is (or was) announced as warning; null when it is not failing or never will be warned. */
  warnsAt: Date | null;
  /** When a failing target is disabled unless an attempt succeeds first. */
  disablesAt: Date | null;
}

/** The state of a target now, and the times its streak reaches each threshold. */
export function healthState(facts: HealthFacts, thresholds: HealthThresholds, nowMs: number): HealthVerdict {
  if (facts.disabledAt !== null) return { state: 'disabled', warnsAt: null, disablesAt: null };
  if (facts.failingSince === null) return { state: 'active', warnsAt: null, disablesAt: null };
  const since = facts.failingSince.getTime();
  const disablesAt = new Date(since + thresholds.disableAfterMs);
  // A warning threshold at or past the disabling one never warns: the target is disabled first.
  const warns = thresholds.warnAfterMs < thresholds.disableAfterMs;
  const warnsAt = warns ? new Date(since + thresholds.warnAfterMs) : null;
  const state = warnsAt !== null && nowMs >= warnsAt.getTime() ? 'warning' : 'failing';
  return { state, warnsAt, disablesAt };
}

/** True when a streak that began at `sinceMs` has reached the warning threshold (and not the disabling one). */
export function dueForWarning(sinceMs: number, thresholds: HealthThresholds, nowMs: number): boolean {
  const age = nowMs - sinceMs;
  return thresholds.warnAfterMs < thresholds.disableAfterMs && age >= thresholds.warnAfterMs;
}
