import type { DispatchResult } from './http/http-dispatcher.js';
import { dispatchFailure, type FailureKind } from './dispatch-failure.js';

/** How an attempt ended, as the retry logic needs it. */
export type Outcome =
  | { kind: 'delivered'; status: number }
  /** `failure`: why no answer came (dispatch-failure.ts); absent when the receiver answered. */
  | { kind: 'retry'; reason: string; retryAfterMs: number | null; failure?: FailureKind }
  | { kind: 'failed'; reason: string; disableTarget: boolean };

const RETRY_AFTER_STATUSES = new Set([408, 425, 429, 503]);

/**
 * Classifies an attempt (docs/delivery.md#delivery-engine): 2xx delivered; 3xx failed (redirects
 * are never followed) but retried like a server error; 408, 429, 5xx and
 * network errors retried; 410 fails and disables the target; other 4xx fail
 * unless the target lists them as retryable. No answer at all: retried on
 * the schedule whatever the dispatch-failure kind (see dispatch-failure.ts for
 * why, and what ends it); a configuration failure says so in its reason.
 */
export function classify(result: DispatchResult, retryableStatuses: readonly number[] = []): Outcome {
  if (result.kind === 'error') {
    const failure = dispatchFailure(result.code).kind;
    const reason = failure === 'configuration' ? `configuration: ${result.code}: ${result.error}` : `${result.code}: ${result.error}`;
    return { kind: 'retry', reason, retryAfterMs: null, failure };
  }
  const { status } = result;
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'failed', reason: 'receiver answered 410 Gone', disableTarget: true };
  const retryAfterMs = RETRY_AFTER_STATUSES.has(status) ? parseRetryAfter(result.headers['retry-after']) : null;
  if (status >= 300 && status < 400) return { kind: 'retry', reason: `redirect ${status} not followed`, retryAfterMs };
  if (status === 408 || status === 425 || status === 429 || status >= 500 || retryableStatuses.includes(status)) {
    return { kind: 'retry', reason: `receiver answered ${status}`, retryAfterMs };
  }
  return { kind: 'failed', reason: `receiver answered ${status}`, disableTarget: false };
}

/** Retry-After as delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim()) * 1000;
  // An HTTP-date names its zone (RFC 9110 §5.6.7); Date.parse alone would
  // also take things like "1.5" or "-1" as dates.
  if (!/[A-Za-z]{3}.*\d{2}:\d{2}:\d{2}/.test(raw)) return null;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
