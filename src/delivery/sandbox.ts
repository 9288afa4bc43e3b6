import type { EventRecord } from '../event-log/event-record.js';
import type { DispatchResult } from './http/http-dispatcher.js';

type SandboxSpec = NonNullable<EventRecord['sandbox']>;

const EMPTY = Buffer.alloc(0);

/**
 * A simulated attempt of a sandbox event (docs/delivery.md): nothing leaves the
 * service. `sb_fail_count` N fails the first N attempts with `sb_fail_code`
 * (500 when only the count is given), then attempts succeed; a code without a
 * count fails every attempt.
 */
export function simulateAttempt(spec: SandboxSpec, attempt: number): DispatchResult {
  const failing = spec.failCount > 0 ? attempt <= spec.failCount : spec.failCode !== null;
  const status = failing ? (spec.failCode ?? 500) : 200;
  return { kind: 'response', status, headers: {}, body: EMPTY, durationMs: 0 };
}
