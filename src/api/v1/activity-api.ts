import Type, { type Static } from 'typebox';
import { ACTIVITY_KINDS, type ActivityKind } from '../../activity/activity-kinds.js';
import type { ManagementAuth } from '../../auth/management-auth.js';
import { ServiceError } from '../../errors.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Router } from '../../http/router.js';
import { nullable, oneOf } from '../../schema/schema-kit.js';
import type { ActivityRepo } from '../../storage/activity-repo.js';
import { pageOf } from '../list-views.js';

export interface ActivityApiDeps {
  auth: ManagementAuth;
  activity: ActivityRepo;
}

/** One entry of the activity feed. */
export const ActivityEntryView = Type.Object(
  {
    id: Type.String({ description: 'increases with time; entries are listed newest first' }),
    at: Type.String({ format: 'date-time' }),
    kind: oneOf(ACTIVITY_KINDS),
    actor: Type.String({ description: "who: 'key:<key id>', 'user:<email or subject>', 'delivery' for what delivery did by itself, 'job' for a job's end" }),
    subject: nullable(Type.String({ description: 'what it was done to: a key id, queue or target name, job id, workspace id' })),
    detail: nullable(Type.String({ description: 'a reason (why delivery disabled a target), a count, a profile' })),
  },
  { title: 'ActivityEntry', additionalProperties: false },
);
/** `GET /v1/tenants/{tenant}/activity`. */
export const ActivityListView = pageOf(ActivityEntryView, 'ActivityList');

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

/**
 * The workspace activity feed (docs/api.md#activity):
 *
 *   GET /v1/tenants/{tenant}/activity?limit=&cursor=&kind=   { items (newest first), nextCursor }
 *
 * Readable by anyone who reads the workspace (any key profile, any role).
 * `kind` may repeat, or list kinds separated by commas.
 */
export function registerActivityApi(router: Router, deps: ActivityApiDeps): void {
  router.add('get', '/v1/tenants/:tenant/activity', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const { limit, before, kinds } = activityQuery(new URLSearchParams(ex.query));
    const rows = await deps.activity.page(ws.id, before, limit + 1, kinds);
    const items = rows.slice(0, limit).map((r) => ({ id: r.id, at: r.at.toISOString(), kind: r.kind, actor: r.actor, subject: r.subject, detail: r.detail }));
    const answer: Static<typeof ActivityListView> = { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
    ex.sendJson(200, answer);
  });
}

/** The query of a feed page; bad values are 400 validation_failed with the field named. */
export function activityQuery(params: URLSearchParams): { limit: number; before: string | null; kinds: ActivityKind[] } {
  const problems: Array<{ field: string; problem: string }> = [];
  let limit = DEFAULT_PAGE;
  const rawLimit = params.get('limit');
  if (rawLimit !== null) {
    const n = /^\d{1,3}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (n >= 1 && n <= MAX_PAGE) limit = n;
    else problems.push({ field: 'limit', problem: `must be an integer from 1 to ${MAX_PAGE}` });
  }
  const cursor = params.get('cursor');
  if (cursor !== null && !/^[1-9]\d{0,18}$/.test(cursor)) problems.push({ field: 'cursor', problem: 'is not a cursor this API returned (pass nextCursor as it is)' });
  const kinds: ActivityKind[] = [];
  for (const kind of params.getAll('kind').flatMap((k) => k.split(','))) {
    if ((ACTIVITY_KINDS as readonly string[]).includes(kind)) kinds.push(kind as ActivityKind);
    else problems.push({ field: 'kind', problem: `must be one of ${ACTIVITY_KINDS.join(', ')}` });
  }
  if (problems.length > 0) throw new ServiceError('validation_failed', 'The activity query is not valid.', problems);
  return { limit, before: cursor, kinds };
}
