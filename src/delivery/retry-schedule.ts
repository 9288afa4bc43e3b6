import type { RetryPolicy } from '../routing/target-settings.js';
import { jittered } from '../util/backoff.js';

/** Jitter of docs/delivery.md#delivery-engine: every delay is drawn from ±20 % of the schedule's value. */
export const JITTER = 0.2;

/**
 * When the next attempt of a failing delivery is due (epoch ms), or null when
 * retrying is over and the delivery is `failed` (dead letter).
 *
 *   scheduleSeconds  [5, 30, 120, …, 43200]   delay before retry 1, 2, 3, …; the last repeats
 *   horizonSeconds   259200                   no attempt later than this after the first one
 *
 * `attemptsDone` counts attempts made so far (≥ 1). A Retry-After the
 * receiver sent wins when it asks for more time than the schedule gives.
 */
export function nextAttemptAt(
  policy: Readonly<RetryPolicy>,
  attemptsDone: number,
  firstAttemptAt: number,
  now: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  const schedule = policy.scheduleSeconds;
  if (schedule.length === 0) return null;
  const step = schedule[Math.min(Math.max(attemptsDone, 1), schedule.length) - 1]!;
  let delay = jittered(step * 1000, JITTER, random);
  if (retryAfterMs !== null && retryAfterMs > delay) delay = retryAfterMs;
  const due = now + Math.round(delay);
  return due <= firstAttemptAt + policy.horizonSeconds * 1000 ? due : null;
}

/** The policy with every duration divided by `factor` (sandbox runs play out fast). */
export function compressed(policy: Readonly<RetryPolicy>, factor: number): RetryPolicy {
  if (factor === 1) return { ...policy };
  return {
    scheduleSeconds: policy.scheduleSeconds.map((s) => s / factor),
    horizonSeconds: policy.horizonSeconds / factor,
    retryableStatuses: policy.retryableStatuses,
  };
}
