import type { IngressAuth } from '../auth/ingress-auth.js';
import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import { newId } from '../ids.js';
import type { EventLogWriter } from '../log/event-log.js';
import type { EventRecord } from '../log/event-record.js';
import { acceptedChannel } from '../observability/channels.js';
import { contextFromHeaders } from './event-context.js';
import { checkHopPath } from './hop-path.js';
import type { QueueDirectory } from './queue-directory.js';

export interface PostEventDeps {
  queues: QueueDirectory;
  auth: IngressAuth;
  log: EventLogWriter;
  keyMaxBytes: number;
}

/**
 * POST /events/{tenant}/{queue}: resolve the queue, authenticate, check its
 * state and the event's context, then append to the log and answer 202 only
 * once the log has the record durably. Anything refused never reaches the log.
 */
export function postEventHandler(deps: PostEventDeps) {
  return async (exchange: Exchange): Promise<void> => {
    const [tenant, queueName] = exchange.params as [string, string];
    const queue = await deps.queues.resolve(decodeSegment(tenant), decodeSegment(queueName));
    if (!queue) throw new ServiceError('not_found', 'No such workspace or queue.');
    await deps.auth.check(exchange, queue);
    if (queue.settings.archived || queue.workspaceArchived) throw new ServiceError('queue_archived');
    if (queue.settings.ingress === 'closed') throw new ServiceError('ingress_closed');

    const ctx = contextFromHeaders(exchange.headers, deps.keyMaxBytes);
    if (queue.settings.groupKeyRequired && ctx.groupKey === null) throw new ServiceError('context_group_key_required');
    const path = checkHopPath(exchange.headers['x-service-path'], `sg:${queue.tenantPublicId}/${queue.queueName}`, queue.settings.hopBudget);
    const body = await exchange.body;

    const record: EventRecord = {
      v: 1,
      id: newId('evt'),
      tenantPublicId: queue.tenantPublicId,
      workspaceId: queue.workspaceId,
      queueId: queue.queueId,
      queueName: queue.queueName,
      receivedAt: Date.now(),
      contentType: exchange.headers['content-type'] ?? null,
      idempotencyKey: exchange.headers['idempotency-key'] ?? null,
      eventType: ctx.eventType,
      groupKey: ctx.groupKey,
      partitionKey: ctx.partitionKey,
      path,
      body,
    };
    try {
      await deps.log.append(record);
    } catch {
      throw new ServiceError('unavailable', 'The event log did not acknowledge the event; it was not accepted.');
    }
    exchange.sendJson(202, { eventId: record.id });
    if (acceptedChannel.hasSubscribers) {
      acceptedChannel.publish({ eventId: record.id, tenantPublicId: queue.tenantPublicId, queueName: queue.queueName, bytes: body.length });
    }
  };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ServiceError('not_found', 'No such workspace or queue.');
  }
}
