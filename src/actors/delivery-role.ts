import { Deliverer } from '../delivery/deliverer.js';
import { HttpDispatcher } from '../delivery/http-dispatcher.js';
import type { NodeContext, RoleHandle } from '../node-context.js';
import { DeliverySupervisor } from './delivery-supervisor.js';

/** Joins the consumer group and runs partition actors for what it is assigned. */
export async function startDeliveryRole(ctx: NodeContext): Promise<RoleHandle> {
  const { config } = ctx;
  const dispatcher = new HttpDispatcher(ctx.guard, config.delivery.maxSocketsPerOrigin, config.delivery.maxResponseBytes);
  const deliverer = new Deliverer(dispatcher, { initialMs: config.delivery.retryInitialMs, maxMs: config.delivery.retryMaxMs });
  const reader = ctx.eventLog.openReader(config.delivery.partitionsConcurrently, ctx.log.child({ component: 'consumer' }));
  const supervisor = new DeliverySupervisor(reader, ctx.routes, deliverer, {
    maxPendingPerPartition: config.delivery.maxPendingPerPartition,
    commitIntervalMs: config.delivery.commitIntervalMs,
  }, ctx.log.child({ component: 'delivery' }));
  await supervisor.start();
  return {
    async drain(deadline) {
      await supervisor.drain(Math.max(0, deadline - Date.now()));
      dispatcher.close();
    },
  };
}
