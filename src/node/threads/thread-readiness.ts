import type { CheckResult } from '../../observability/readiness.js';
import type { FailingCheck } from './thread-messages.js';

/**
 * A thread's failing checks, as it reports them to the others: the
 * dependencies (redis, postgres, kafka, …) and the start, with their errors;
 * not `threads`, which is the other threads' state and not this one's.
 */
export function failingChecks(checks: Readonly<Record<string, CheckResult>>): FailingCheck[] {
  const failing: FailingCheck[] = [];
  for (const name in checks) {
    const result = checks[name]!;
    if (name !== 'threads' && !result.ok) failing.push({ name, error: result.error ?? 'failing' });
  }
  return failing;
}

/** "redis failing on thread 1: connect ECONNREFUSED …; kafka failing on thread 1: …" */
export function describeFailing(failing: readonly FailingCheck[], thread: string): string {
  return failing.map((f) => `${f.name} failing on ${thread}: ${f.error}`).join('; ');
}
