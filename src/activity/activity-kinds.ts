import type { Caller } from '../auth/management-auth.js';

/**
 * What the workspace activity feed records (docs/api.md#activity). One word
 * per action, `<thing>.<what happened>`; the API lists them as they are.
 */
export const ACTIVITY_KINDS = [
  'workspace.created',
  'key.created',
  'key.revoked',
  'queue.closed',
  'queue.opened',
  'queue.archived',
  'queue.restored',
  'target.warned',
  'target.disabled',
  'target.enabled',
  'redelivery.started',
  'redelivery.cancelled',
  'redelivery.finished',
  'replay.started',
  'replay.cancelled',
  'replay.finished',
] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/** One entry: what, who, on what (a key id, queue or target name, job id), and anything worth saying (a reason, a count). */
export interface ActivityEntry {
  kind: ActivityKind;
  actor: string;
  subject: string | null;
  detail: string | null;
}

/** The actor delivery writes for what it does by itself (disabling, warning). */
export const DELIVERY_ACTOR = 'delivery';
/** The actor of a redelivery or replay job's end: the job itself (its start names who started it). */
export const JOB_ACTOR = 'job';

/** Who made a management call, as the feed names them: `key:<key id>` or `user:<email, else subject>`. */
export function actorOf(caller: Caller): string {
  if (caller.kind === 'key') return `key:${caller.keyId}`;
  return `user:${caller.email ?? caller.subject}`;
}
