import { setTimeout as sleep } from 'node:timers/promises';
import type { ManagementAuth } from '../../auth/management-auth.js';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import { retentionMs, type FoundRecord } from '../../event-log/event-log.js';
import { decodeEvent, type EventRecord } from '../../event-log/event-record.js';
import type { NodeContext } from '../../node/node-context.js';
import { DeliveryRecordRepo, type EventView } from '../../storage/delivery-record-repo.js';
import { RedeliveryRepo } from '../../storage/redelivery-repo.js';
import { RetentionRepo } from '../../storage/retention-repo.js';
import type { WorkspaceRow } from '../../storage/topology-repo.js';
import Type, { type Static } from 'typebox';
import { compileBody } from '../../schema/body-validator.js';
import { closed, maybe } from '../../schema/schema-kit.js';
import { readBody } from '../json-body.js';
import { decodePathSegment } from '../../http/path-segment.js';
import { eventIdTime } from '../../ids.js';
import { redeliver } from './redeliver.js';
import { eventContent } from './event-content.js';
import type { EventView as EventAnswer, RedeliveryQueuedView, SandboxRunView } from './event-views.js';


/** The body of `POST /v1/tenants/{tenant}/events/{eventId}/redeliver`: one target of the event, or (none given) all of them. */
export const RedeliverInput = closed(
  { target: maybe(Type.String({ maxLength: 100, description: 'name of a target the event was routed to' })) },
  { title: 'RedeliverInput', description: 'Which target to send the event to again; none: every target it was routed to.' },
);
const checkRedeliverInput = compileBody(RedeliverInput);
/** Events listed by one sandbox run answer, at most. */
const RUN_LIMIT = 1000;
/**
 * An event id minted this recently whose event is not in the delivery records yet
 * is most likely still on its way from the log to delivery: its GET waits (up
 * to FRESH_WAIT_MS, polling) instead of answering 404 a moment too early.
 */
const FRESH_MS = 10_000;
const FRESH_WAIT_MS = 1_500;
const FRESH_POLL_MS = 100;
/**
 * Older than that and still not in the delivery records (delivery is behind), the
 * event is looked up in the log itself, near the time its id carries: Kafka
 * stamps a record when it is produced, within moments of its receipt (the
 * window allows for producer retries and clocks a second apart).
 */
const LOOKUP_MAX_AGE_MS = 7 * 24 * 3_600_000;
const LOOKUP_BEFORE_MS = 1_000;
const LOOKUP_WINDOW_MS = 6_000;

/**
 * Inspection and redelivery (docs/delivery.md):
 *
 *   GET  /v1/tenants/{tenant}/events/{eventId}              the event, its deliveries and attempts
 *   POST /v1/tenants/{tenant}/events/{eventId}/redeliver    { target? }: deliver again, same event id
 *   GET  /v1/tenants/{tenant}/sandbox/runs/{runId}          a sandbox run's events and simulated attempts
 *
 * What is shown comes from the delivery records delivery writes in batches, so an
 * event appears once a delivery node has consumed it (normally within a
 * fraction of a second of its 202) and attempts show up to ~100 ms late. A GET
 * for an event received in the last 10 s that is not there yet waits for it
 * (up to 1.5 s) rather than answering 404 at once; one that is still not there
 * (delivery is behind) is looked up in the event log by the time its id
 * carries, and shown with every routed target pending.
 */
export function registerEventsApi(ctx: NodeContext, auth: ManagementAuth): void {
  const log = new DeliveryRecordRepo(ctx.sql);
  const redeliveries = new RedeliveryRepo(ctx.sql);
  const opts = { maxBodyBytes: ctx.config.server.maxManagementBodyBytes };
  const lookups = new LogLookups(ctx);
  const retention = new RetentionRepo(ctx.sql);
  const base = '/v1/tenants/:tenant';

  const access = async (ex: Exchange): Promise<WorkspaceRow> => (await auth.configWorkspace(ex, decodePathSegment(ex.params[0]!))).ws;

  ctx.router.add('get', `${base}/events/:eventId`, opts, async (ex) => {
    const ws = await access(ex);
    const eventId = decodePathSegment(ex.params[1]!);
    const event = await findEvent(ws, eventId, ex);
    if (!event) throw await notFound(ws, eventId);
    // Headers and body live only in the log: read the record back at its offset.
    const bytes = await ctx.eventLog.readAt(event.logPartition, event.logOffset).catch((err: unknown) => {
      throw Object.assign(new ServiceError('unavailable', 'The event log is unavailable; retry later.'), { cause: err });
    });
    const record = bytes ? decodeEvent(bytes) : null;
    // Past retention the record is gone: the event is, for its workspace (never a half-empty answer).
    if (!record || record.id !== event.eventId) throw expired(event.eventId);
    const answer: Static<typeof EventAnswer> = { ...eventJson(ws, event), ...eventContent(record) };
    ex.sendJson(200, answer);
  });

  /** True when the id's time is older than the workspace keeps events (retention.hours, or its own shorter one). */
  async function pastRetention(ws: WorkspaceRow, eventId: string): Promise<boolean> {
    const minted = eventIdTime(eventId);
    if (minted === null) return false;
    return Date.now() - minted >= Math.min(retentionMs(ctx.config), (await retention.workspaceRetentionMs(ws.id)) ?? Infinity);
  }

  /** 404 for an event not found: `expired` when its id says it is past retention. */
  async function notFound(ws: WorkspaceRow, eventId: string): Promise<ServiceError> {
    return (await pastRetention(ws, eventId)) ? expired(eventId) : new ServiceError('not_found', 'No such event.');
  }

  /** The delivery records's view of an event; failing that, the event log's (delivery has not consumed it yet). */
  async function findEvent(ws: WorkspaceRow, eventId: string, ex: Exchange): Promise<EventView | null> {
    const event = await log.event(ws.id, eventId);
    const minted = eventIdTime(eventId);
    if (event || minted === null) return event;
    if (Math.abs(Date.now() - minted) < FRESH_MS) {
      const until = Math.min(minted + FRESH_MS, Date.now() + FRESH_WAIT_MS);
      while (!ex.aborted && Date.now() < until) {
        await sleep(FRESH_POLL_MS);
        const consumed = await log.event(ws.id, eventId);
        if (consumed) return consumed;
      }
    }
    if (Date.now() - minted >= LOOKUP_MAX_AGE_MS || minted >= Date.now() + FRESH_MS) return null;
    // Past its retention the sweep removed it from the delivery records on purpose (docs/operations.md#retention).
    if (await pastRetention(ws, eventId)) return null;
    const found = await lookups.find(eventId, minted, ex.requestId);
    // Delivery may have consumed it meanwhile: the delivery records then has more to say.
    const consumed = await log.event(ws.id, eventId);
    if (consumed || found === null || found.record.workspaceId !== ws.id) return consumed;
    return notConsumedView(ctx, found);
  }

  ctx.router.add('post', `${base}/events/:eventId/redeliver`, { ...opts, body: checkRedeliverInput }, async (ex) => {
    const ws = await access(ex);
    const targetName = (await readBody(ex, checkRedeliverInput)).target ?? undefined;
    // The same lookup as GET: an event delivered moments ago may not be in the
    // delivery records yet (it is flushed in batches), but the event log has it.
    const eventId = decodePathSegment(ex.params[1]!);
    const event = await findEvent(ws, eventId, ex);
    if (!event) throw await notFound(ws, eventId);

    // Only where the event was routed: a redelivery runs through routing again
    // (a target no longer routed, or disabled, shows as `blocked`).
    let targets = event.deliveries
      .filter((d) => d.targetPublicId !== null)
      .map((d) => ({ id: d.targetId, publicId: d.targetPublicId!, name: d.targetName! }));
    if (targetName !== undefined) {
      const target = await ctx.topology.targetByName(ws.id, targetName);
      if (!target) throw new ServiceError('not_found', 'No such target.');
      targets = targets.filter((t) => t.id === target.id);
      if (targets.length === 0) throw new ServiceError('conflict', `The event was not routed to target ${targetName}.`);
    }
    if (targets.length === 0) throw new ServiceError('conflict', 'The event was routed to no target that still exists.');

    const { gone } = await redeliver(ctx, { redeliveries, log }, [
      { eventId: event.eventId, targetIds: targets.map((t) => t.id), logPartition: event.logPartition, logOffset: event.logOffset, receivedAt: event.receivedAt.toISOString() },
    ]);
    if (gone.length > 0) throw expired(event.eventId);
    const answer: Static<typeof RedeliveryQueuedView> = {
      eventId: event.eventId,
      targets: targets.map((t) => ({ target: t.name, targetPublicId: t.publicId, status: 'pending' })),
    };
    ex.sendJson(202, answer);
  });

  ctx.router.add('get', `${base}/sandbox/runs/:runId`, opts, async (ex) => {
    const ws = await access(ex);
    const runId = decodePathSegment(ex.params[1]!);
    const events = await log.runEvents(ws.id, runId, RUN_LIMIT);
    if (events.length === 0) throw new ServiceError('not_found', 'No such sandbox run (a run shows here once delivery has picked up one of its events).');
    const answer: Static<typeof SandboxRunView> = { runId, tenantPublicId: ws.publicId, events: events.map((e) => eventJson(ws, e)) };
    ex.sendJson(200, answer);
  });
}

/** Searches of the log for events the delivery records does not show yet, one at a time (each may join a Kafka group). */
class LogLookups {
  private chain: Promise<unknown> = Promise.resolve();

  private readonly ctx: NodeContext;
  constructor(ctx: NodeContext) {
    this.ctx = ctx;
  }

  find(eventId: string, mintedAt: number, reqId: string): Promise<{ record: EventRecord; found: FoundRecord } | null> {
    const needle = Buffer.from(eventId);
    // The id's bytes first (cheap), then a decode to be sure it is the record's own id, not body text.
    const match = (bytes: Buffer) => bytes.includes(needle) && decodeEvent(bytes).id === eventId;
    const run = this.chain.then(async () => {
      const found = await this.ctx.eventLog.findSince(mintedAt - LOOKUP_BEFORE_MS, LOOKUP_WINDOW_MS, match);
      return found === null ? null : { record: decodeEvent(found.bytes), found };
    });
    this.chain = run.catch(() => {});
    return run.catch((err: unknown) => {
      this.ctx.log.warn({ err, eventId, reqId }, 'event lookup in the log failed');
      return null;
    });
  }
}

/** An event the log holds that no delivery node has consumed yet: every target it routes to is pending (blocked if disabled). */
async function notConsumedView(ctx: NodeContext, { record, found }: { record: EventRecord; found: FoundRecord }): Promise<EventView> {
  const targets = await ctx.routes.targetsFor(record);
  return {
    eventId: record.id,
    queueName: record.queueName,
    eventType: record.eventType,
    groupKey: record.groupKey,
    partitionKey: record.partitionKey,
    idempotencyKey: record.idempotencyKey,
    receivedAt: new Date(record.receivedAt),
    runId: record.sandbox?.runId ?? null,
    logPartition: found.partition,
    logOffset: found.offset,
    deliveries: targets.map((t) => ({ targetId: t.id, targetPublicId: t.publicId, targetName: t.name, status: t.disabled ? 'blocked' : 'pending', attempts: [], updatedAt: null })),
  };
}

function eventJson(ws: WorkspaceRow, e: EventView): Static<typeof EventAnswer> {
  return {
    eventId: e.eventId,
    tenantPublicId: ws.publicId,
    queue: e.queueName,
    eventType: e.eventType,
    groupKey: e.groupKey,
    partitionKey: e.partitionKey,
    idempotencyKey: e.idempotencyKey,
    receivedAt: e.receivedAt.toISOString(),
    ...(e.runId !== null ? { sandbox: { runId: e.runId } } : {}),
    deliveries: e.deliveries.map((d) => ({
      target: d.targetName,
      targetPublicId: d.targetPublicId,
      status: d.status,
      attempts: d.attempts,
    })),
  };
}


/** 404 for an event whose record the log has dropped (retention.hours). */
function expired(eventId: string): ServiceError {
  return new ServiceError('not_found', `Event ${eventId} has expired: the event log no longer holds it (retention.hours), so it can be neither shown nor delivered again.`);
}
