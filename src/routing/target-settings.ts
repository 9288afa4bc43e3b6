/**
 * A target's settings (docs/api.md#configuration-api) beside its URL. The skeleton delivers with
 * timeoutMs and staticHeaders; auth modes, retry policy and the group key
 * header are stored now and applied by the delivery pipeline as it grows.
 */
export type TargetAuth =
  | { mode: 'none' }
  | { mode: 'bearer'; token: string }
  | { mode: 'basic'; username: string; password: string }
  | { mode: 'oauth2'; tokenUrl: string; clientId: string; clientSecret: string; scope?: string };

export interface RetryPolicy {
  scheduleSeconds: number[];
  horizonSeconds: number;
  retryableStatuses: number[];
}

export interface TargetSettings {
  auth: TargetAuth;
  staticHeaders: Record<string, string>;
  timeoutMs: number;
  retryPolicy?: RetryPolicy;
  groupKeyHeader?: string;
  /** Requests open to the target at once at most (docs/flow-control.md); unset: delivery.flow.maxConcurrency. */
  maxConcurrency?: number;
  /** Requests started per second at most; unset: delivery.flow.maxRatePerSecond. */
  maxRatePerSecond?: number;
}

export function withTargetDefaults(stored: Partial<TargetSettings>, defaultTimeoutMs: number): TargetSettings {
  return {
    auth: stored.auth ?? { mode: 'none' },
    staticHeaders: stored.staticHeaders ?? {},
    timeoutMs: stored.timeoutMs ?? defaultTimeoutMs,
    ...(stored.retryPolicy ? { retryPolicy: stored.retryPolicy } : {}),
    ...(stored.groupKeyHeader ? { groupKeyHeader: stored.groupKeyHeader } : {}),
    ...(stored.maxConcurrency ? { maxConcurrency: stored.maxConcurrency } : {}),
    ...(stored.maxRatePerSecond ? { maxRatePerSecond: stored.maxRatePerSecond } : {}),
  };
}
