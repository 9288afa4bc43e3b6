import { deliveryStream } from '../../delivery/delivery-stream.js';
import { decodeEvent } from '../../event-log/event-record.js';
import type { NodeContext } from '../../node/node-context.js';
import type { DeliveryRecordRepo } from '../../storage/delivery-record-repo.js';
import type { RedeliveryInput, RedeliveryRepo } from '../../storage/redelivery-repo.js';

/** One event to deliver again to some of the targets it was routed to. */
export interface RedeliveryOrder {
  eventId: string;
  targetIds: readonly string[];
  /** Where the event log holds the record (from the delivery records). */
  logPartition: number;
  logOffset: bigint;
  /** The event's receive time, ISO-8601 (with the id, its row's key, migration 090). */
  receivedAt: string;
  /** The parked lane the redelivery joins (a replay's per partition key); absent: a lane of its own. */
  laneKey?: string;
}

/**
 * The one redelivery path (docs/delivery.md), for `POST …/events/{id}/redeliver`
 * and bulk redelivery jobs alike: reads each record back from the event log,
 * hands a copy to the partition's owner (redelivery_requests, a lane of its
 * own, same event id, fresh retry horizon) and marks the deliveries pending.
 * Returns the orders whose record the log no longer holds (retention): those
 * cannot be delivered again.
 */
export async function redeliver(
  ctx: Pick<NodeContext, 'eventLog' | 'config'>,
  repos: { redeliveries: RedeliveryRepo; log: DeliveryRecordRepo },
  orders: readonly RedeliveryOrder[],
): Promise<{ gone: RedeliveryOrder[] }> {
  const stream = deliveryStream(ctx.config.kafka);
  const gone: RedeliveryOrder[] = [];
  const requests: RedeliveryInput[] = [];
  const found: RedeliveryOrder[] = [];
  for (const order of orders) {
    const bytes = await ctx.eventLog.readAt(order.logPartition, order.logOffset);
    if (!bytes || decodeEvent(bytes).id !== order.eventId) {
      gone.push(order);
      continue;
    }
    found.push(order);
    for (const targetId of order.targetIds) {
      const request: RedeliveryInput = { stream, partition: order.logPartition, targetId, seq: order.logOffset, eventId: order.eventId, record: bytes };
      if (order.laneKey !== undefined) request.laneKey = order.laneKey;
      requests.push(request);
    }
  }
  await repos.redeliveries.request(requests);
  await repos.log.markPending(found.flatMap((o) => o.targetIds.map((targetId) => ({ eventId: o.eventId, targetId, receivedAt: o.receivedAt }))));
  return { gone };
}
