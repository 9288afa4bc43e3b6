import { runChecks, type CheckJob, type CheckVerdict } from './crypto-checks.js';

/**
 * Entry point of a validation pool thread (piscina loads the default export).
 * One task is one batch: every check the event loop collected in one turn.
 */
export default function validate(jobs: CheckJob[]): CheckVerdict[] {
  return runChecks(jobs);
}
