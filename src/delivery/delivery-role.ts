import { DeliveryRecords } from './delivery-records.js';
import { Deliverer } from './deliverer.js';
import { deliveryStream } from './delivery-stream.js';
import { FailureStreaks } from './failure-streaks.js';
import { HttpDispatcher } from './http/http-dispatcher.js';
import { loadTlsTrust } from './http/undici-client.js';
import { OAuthTokens } from './http/oauth-tokens.js';
import { SigningPlans } from './signing/signing-plans.js';
import { TargetFlows } from './flow/target-flows.js';
import type { NodeContext, RoleHandle } from '../node/node-context.js';
import { DeliveryRecordRepo } from '../storage/delivery-record-repo.js';
import { consumerGroupCheck } from '../observability/readiness-checks.js';
import { ParkedDeliveryRepo } from '../storage/parked-delivery-repo.js';
import { QueueLookupRepo } from '../storage/queue-lookup-repo.js';
import { SigningKeyRepo } from '../storage/signing-key-repo.js';
import { KeyEncryption } from '../storage/key-encryption.js';
import { TargetStateRepo } from '../storage/target-state-repo.js';
import { ActivityRepo } from '../storage/activity-repo.js';
import { TargetHealthRepo } from '../storage/target-health-repo.js';
import { DELIVERY_ACTOR } from '../activity/activity-kinds.js';
import { HealthRecorder } from './health/health-recorder.js';
import { DeliveryStep } from './delivery-step.js';
import { DeliverySupervisor } from './delivery-supervisor.js';
import { ParkWriter } from './park-writer.js';
import { KeyedSemaphores, Semaphore } from './semaphore.js';

/** Joins the consumer group and runs partition actors for what it is assigned. */
export async function startDeliveryRole(ctx: NodeContext): Promise<RoleHandle> {
  const { config } = ctx;
  // Delivery retries its own reads and writes; an abandoned write (request deadline) could commit twice.
  const sql = ctx.backgroundSql;
  const d = config.delivery;
  const log = ctx.log.child({ component: 'delivery' });
  const dispatcher = new HttpDispatcher(ctx.guard, d.maxSocketsPerOrigin, d.maxResponseBytes, loadTlsTrust(d.tls.caFile));
  const plans = new SigningPlans(
    new QueueLookupRepo(sql),
    new SigningKeyRepo(sql),
    config.ingress.cacheTtlMs,
    KeyEncryption.fromSetting(config.signing.keyEncryptionKey, config.signing.previousKeyEncryptionKeys),
    log,
  );
  ctx.bus.onInvalidate(() => plans.invalidate());
  const flows = new TargetFlows(d.flow);
  const spillSlots = new KeyedSemaphores(d.parking.maxConcurrentDrains);
  const deliverer = new Deliverer(dispatcher, new OAuthTokens(dispatcher, d.oauthRefreshMarginSeconds), plans, {
    scheduleSeconds: [...d.retry.scheduleSeconds],
    horizonSeconds: d.retry.horizonSeconds,
    retryableStatuses: [],
  }, undefined, ctx.tracing, flows);
  const deliveryLog = new DeliveryRecordRepo(sql);
  const deliveryRecords = new DeliveryRecords(deliveryLog, d.attemptLog, log);
  const parkRepo = new ParkedDeliveryRepo(sql);
  const parkWriter = new ParkWriter(parkRepo, d.parking.flushMs, log);
  const targetState = new TargetStateRepo(sql);
  const activity = new ActivityRepo(sql);
  const streaks = new FailureStreaks(targetState, d.disableAfterFailingSeconds * 1000);
  const health = new HealthRecorder(
    new TargetHealthRepo(sql),
    activity,
    (targetId) => streaks.since(targetId),
    { warnAfterMs: d.warnAfterFailingSeconds * 1000, disableAfterMs: d.disableAfterFailingSeconds * 1000 },
    d.healthFlushMs,
    log,
  );
  health.start();
  const stream = deliveryStream(config.kafka);
  const step = new DeliveryStep({
    stream,
    routes: ctx.routes,
    deliverer,
    deliveryRecords,
    async disableTarget(target, reason) {
      // Every node's route cache learns it through the bus; later jobs of the target become `blocked`.
      if (await targetState.disable(target.id, reason)) {
        await ctx.bus.publish('target');
        await activity.recordForTarget(target.id, { kind: 'target.disabled', actor: DELIVERY_ACTOR, detail: reason });
      }
    },
    sandboxSpeedup: d.sandboxSpeedup,
    streaks,
    log,
  });
  const reader = ctx.eventLog.openReader(ctx.log.child({ component: 'consumer' }));
  const supervisor = new DeliverySupervisor(
    reader,
    {
      stream,
      routes: ctx.routes,
      step,
      deliveryRecords,
      parkWriter,
      parkRepo,
      deliveryLog,
      drainSlots: new Semaphore(d.parking.maxConcurrentDrains),
      spill: { saturated: (targetId) => flows.saturated(targetId), slots: (targetId) => spillSlots.of(targetId) },
      now: Date.now,
    },
    {
      maxPendingPerPartition: d.maxPendingPerPartition,
      commitIntervalMs: d.commitIntervalMs,
      holdInMemoryMs: d.retry.holdInMemoryMs,
      pageSize: d.parking.pageSize,
      sweepMs: d.parking.sweepMs,
      redeliveryPollMs: d.parking.redeliveryPollMs,
    },
    log,
  );
  ctx.metrics.delivery = {
    lanes: () => supervisor.laneCounts(),
    inFlightByOrigin: () => dispatcher.inFlightByOrigin(),
    concurrencyLimitByOrigin: () => flows.limitsByOrigin(),
    attemptLogBacklog: () => deliveryRecords.buffered,
    lag: () => reader.lag(),
  };
  await supervisor.start();
  return {
    checks: { consumerGroup: consumerGroupCheck(reader) },
    async drain(deadline) {
      await supervisor.drain(Math.max(0, deadline - Date.now()));
      dispatcher.close();
      flows.close();
      await parkWriter.close();
      await health.stop();
      await deliveryRecords.flush().catch((err: unknown) => log.warn({ err }, 'delivery records not flushed at shutdown'));
    },
  };
}
