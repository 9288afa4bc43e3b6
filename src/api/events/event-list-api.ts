import type { ManagementAuth } from '../../auth/management-auth.js';
import { ServiceError } from '../../errors.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { NodeContext } from '../../node/node-context.js';
import { EventListRepo, type EventListItem } from '../../storage/event-list-repo.js';
import type { Static } from 'typebox';
import { encodeCursor, readEventListQuery } from './event-list-query.js';
import type { EventListItemView, EventListView } from './event-views.js';

/**
 * `GET /v1/tenants/{tenant}/queues/{name}/events`: the console's event list,
 * newest first, filtered (status, target, from/to, eventType, partitionKey,
 * all of them ANDed) and paginated by an opaque keyset cursor.
 *
 * It reads the delivery records delivery writes in batches, not anything ingress
 * writes: accepting an event costs no database write, so an event is listed
 * once a delivery node has consumed it (normally well under a second after its
 * 202; longer while delivery is behind). GET …/events/{id} finds it earlier.
 */
export function registerEventListApi(ctx: NodeContext, auth: ManagementAuth): void {
  const repo = new EventListRepo(ctx.sql);
  ctx.router.add('get', '/v1/tenants/:tenant/queues/:name/events', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const queue = await ctx.topology.queueByName(ws.id, decodePathSegment(ex.params[1]!));
    if (!queue) throw new ServiceError('not_found', 'No such queue.');
    const q = readEventListQuery(ex.query);
    let targetId: string | undefined;
    if (q.target !== undefined) {
      const target = await ctx.topology.targetByName(ws.id, q.target);
      if (!target) throw new ServiceError('not_found', `No such target: ${q.target}.`);
      targetId = target.id;
    }
    const { items, more } = await repo.page({
      workspaceId: ws.id,
      queueName: queue.name,
      ...(q.status !== undefined ? { status: q.status } : {}),
      ...(targetId !== undefined ? { targetId } : {}),
      ...(q.from ? { from: q.from } : {}),
      ...(q.to ? { to: q.to } : {}),
      ...(q.eventType !== undefined ? { eventType: q.eventType } : {}),
      ...(q.partitionKey !== undefined ? { partitionKey: q.partitionKey } : {}),
      ...(q.after ? { after: q.after } : {}),
      limit: q.limit,
    });
    const last = items[items.length - 1];
    const answer: Static<typeof EventListView> = { items: items.map(itemJson), nextCursor: more && last ? encodeCursor(last.position) : null };
    ex.sendJson(200, answer);
  });
}

function itemJson(e: EventListItem): Static<typeof EventListItemView> {
  return {
    eventId: e.eventId,
    receivedAt: e.receivedAt.toISOString(),
    eventType: e.eventType,
    partitionKey: e.partitionKey,
    targets: e.targets.map((t) => ({
      target: t.target,
      status: t.status,
      attempts: t.attempts,
      lastAttemptAt: t.lastAttemptAt,
      lastStatus: t.lastStatus,
    })),
  };
}
