import type { EventRecord } from '../event-log/event-record.js';
import type { DispatchResult } from './http/http-dispatcher.js';

type SandboxSpec = NonNullable<EventRecord['sandbox']>;

const EMPTY = Buffer.alloc(0);

/**
 * A simulated attempt of a sandbox event (docs/api.md#sandbox): nothing leaves
 * the service. The first `failCount` attempts fail with `failCode` (500 when
 * only the count was given), then attempts succeed: `sb_fail_count=0` succeeds
 * at once whatever the code. A code without a count fails every attempt
 * (ingress stores the count as FAIL_EVERY_ATTEMPT then).
 */
export function simulateAttempt(spec: SandboxSpec, attempt: number): DispatchResult {
  const failing = attempt <= spec.failCount;
  const status = failing ? (spec.failCode ?? 500) : 200;
  return { kind: 'response', status, headers: {}, body: EMPTY, durationMs: 0 };
}
