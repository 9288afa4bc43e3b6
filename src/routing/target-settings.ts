/**
 * A target's settings (contract §4) beside its URL. The skeleton delivers with
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
}

export function withTargetDefaults(stored: Partial<TargetSettings>, defaultTimeoutMs: number): TargetSettings {
  return {
    auth: stored.auth ?? { mode: 'none' },
    staticHeaders: stored.staticHeaders ?? {},
    timeoutMs: stored.timeoutMs ?? defaultTimeoutMs,
    ...(stored.retryPolicy ? { retryPolicy: stored.retryPolicy } : {}),
    ...(stored.groupKeyHeader ? { groupKeyHeader: stored.groupKeyHeader } : {}),
  };
}
