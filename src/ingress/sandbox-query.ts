import { ServiceError, type FieldProblem } from '../errors.js';
import type { EventRecord } from '../event-log/event-record.js';

/**
 * Sandbox query parameters (docs/api.md). On the sandbox route
 * they become `record.sandbox` (delivery simulates, nothing leaves); on the
 * production route any of them is refused with sandbox_query_not_allowed.
 */
export const SANDBOX_PARAMS = ['sb_fail_code', 'sb_fail_count', 'runId'] as const;

/** When only sb_fail_code is given, every attempt fails: the count is "all of them". */
export const FAIL_EVERY_ATTEMPT = 2_147_483_647;

const RUN_ID = /^[A-Za-z0-9_.:-]{1,100}$/;
const MAX_FAIL_COUNT = 1000;

/** True when the query names any sandbox parameter (names compared after percent-decoding). */
export function hasSandboxParams(rawQuery: string): boolean {
  if (rawQuery === '') return false;
  const params = new URLSearchParams(rawQuery);
  return SANDBOX_PARAMS.some((name) => params.has(name));
}

export function readSandboxParams(rawQuery: string): NonNullable<EventRecord['sandbox']> {
  const params = new URLSearchParams(rawQuery);
  const problems: FieldProblem[] = [];
  const integer = (name: string, min: number, max: number): number | null => {
    const raw = params.get(name);
    if (raw === null) return null;
    if (!/^\d{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push({ field: name, problem: `must be an integer from ${min} to ${max}` });
      return null;
    }
    return Number(raw);
  };
  const failCode = integer('sb_fail_code', 100, 599);
  const count = integer('sb_fail_count', 0, MAX_FAIL_COUNT);
  const runId = params.get('runId');
  if (runId !== null && !RUN_ID.test(runId)) problems.push({ field: 'runId', problem: "must be 1-100 letters, digits, '_', '.', ':' or '-'" });
  if (problems.length > 0) {
    throw new ServiceError('validation_failed', `Sandbox parameters are not valid: ${problems.map((p) => `${p.field} ${p.problem}`).join('; ')}.`, problems);
  }
  return {
    failCode,
    failCount: count ?? (failCode !== null ? FAIL_EVERY_ATTEMPT : 0),
    runId,
  };
}
