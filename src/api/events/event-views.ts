/**
 * What the inspection API answers for an event (with its deliveries and their
 * attempts), a row of the event list and a bulk redelivery job: the schemas
 * the OpenAPI document shows (components.schemas Attempt, Delivery, Event,
 * EventListItem, RedeliveryJob) and the types the functions building those
 * answers return, so the document cannot drift from the code (the OpenAPI
 * test validates real answers against them).
 */
import Type from 'typebox';
import { nullable, oneOf } from '../../schema/schema-kit.js';
import { pageOf } from '../list-views.js';

const time = () => Type.String({ format: 'date-time' });
/** A [name, value] pair, as draft 2020-12 writes a tuple (prefixItems; TypeBox's Tuple writes the older array form of items). */
const NAME_VALUE = Type.Unsafe<[name: string, value: string]>({
  type: 'array',
  prefixItems: [{ type: 'string' }, { type: 'string' }],
  items: false,
  minItems: 2,
  maxItems: 2,
});
const DELIVERY_STATUSES = ['pending', 'delivered', 'retrying', 'failed', 'blocked'] as const;

export const AttemptView = Type.Object(
  {
    at: time(),
    status: nullable(Type.Integer({ description: 'HTTP status; null when no response came' })),
    durationMs: Type.Integer(),
    error: nullable(Type.String()),
    simulated: Type.Optional(Type.Literal(true, { description: 'sandbox: nothing was sent (absent on real attempts)' })),
  },
  { title: 'Attempt', additionalProperties: false },
);

export const DeliveryView = Type.Object(
  {
    target: nullable(Type.String({ description: 'the target\'s name; null once the target is deleted' })),
    targetPublicId: nullable(Type.String({ pattern: '^tgt_' })),
    status: oneOf(DELIVERY_STATUSES),
    attempts: Type.Array(AttemptView),
  },
  { title: 'Delivery', additionalProperties: false },
);

export const EventView = Type.Object(
  {
    eventId: Type.String({ pattern: '^evt_' }),
    tenantPublicId: Type.String({ pattern: '^ten_' }),
    queue: Type.String(),
    eventType: nullable(Type.String()),
    groupKey: nullable(Type.String()),
    partitionKey: nullable(Type.String()),
    idempotencyKey: nullable(Type.String()),
    receivedAt: time(),
    sandbox: Type.Optional(Type.Object({ runId: Type.String() }, { additionalProperties: false, description: 'sandbox events only' })),
    deliveries: Type.Array(DeliveryView),
    // GET of one event only (a sandbox run lists its events without them).
    retained: Type.Optional(Type.Boolean({ description: 'always true in an answer: an event the event log no longer holds (retention) is 404 not_found (GET of one event only)' })),
    contentType: Type.Optional(nullable(Type.String({ description: 'GET of one event only' }))),
    headers: Type.Optional(
      Type.Array(NAME_VALUE, {
        description:
          'headers kept with the event and sent on by delivery (content-type, x-service-event-type, idempotency-key, x-service-path, mapped headers, traceparent/tracestate), as [name, value] pairs (GET of one event only)',
      }),
    ),
    bodyBytes: Type.Optional(nullable(Type.Integer({ description: 'GET of one event only' }))),
    bodyBase64: Type.Optional(nullable(Type.String({ description: 'the body as received, base64 (GET of one event only)' }))),
  },
  { title: 'Event', additionalProperties: false },
);

export const EventListItemView = Type.Object(
  {
    eventId: Type.String({ pattern: '^evt_' }),
    receivedAt: time(),
    eventType: nullable(Type.String()),
    partitionKey: nullable(Type.String()),
    targets: Type.Array(
      Type.Object(
        {
          target: Type.String(),
          status: oneOf(DELIVERY_STATUSES),
          attempts: Type.Integer({ description: 'how many attempts so far' }),
          lastAttemptAt: nullable(time()),
          lastStatus: nullable(Type.Integer({ description: 'HTTP status of the last attempt; null when none came or no attempt was made' })),
        },
        { additionalProperties: false },
      ),
      { description: 'one per target the event was routed to (targets deleted since are left out), by target name' },
    ),
  },
  { title: 'EventListItem', additionalProperties: false },
);

export const RedeliveryJobView = Type.Object(
  {
    jobId: Type.String({ pattern: '^rdj_' }),
    kind: oneOf(['failed', 'replay'] as const),
    status: oneOf(['running', 'done', 'failed', 'cancelled'] as const),
    total: Type.Integer({ description: 'failed deliveries in the range (a replay: deliveries not acknowledged since from) when the job started' }),
    done: Type.Integer({ description: 'handed to delivery again (now pending)' }),
    failed: Type.Integer({ description: 'could not be redelivered: the event log no longer holds the event (retention)' }),
    from: time(),
    to: time(),
    error: nullable(Type.String()),
    createdAt: time(),
    finishedAt: nullable(time()),
  },
  {
    title: 'RedeliveryJob',
    additionalProperties: false,
    description:
      'kind failed: the failed deliveries of events received in [from, to); replay: every delivery the target did not acknowledge (failed or blocked) of events received from `from` until the job started (`to`). status failed: the job stopped (its management node stopped or died, or an error); cancelled: POST …/cancel stopped it. Deliveries handed over before stay handed over',
  },
);

/** What `POST …/events/{eventId}/redeliver` answers (202): the targets the event is handed to again. */
export const RedeliveryQueuedView = Type.Object(
  {
    eventId: Type.String({ pattern: '^evt_' }),
    targets: Type.Array(
      Type.Object(
        { target: Type.String(), targetPublicId: Type.String({ pattern: '^tgt_' }), status: Type.Literal('pending') },
        { additionalProperties: false },
      ),
      { description: 'the named target, or every target the event was routed to that still exists' },
    ),
  },
  { title: 'RedeliveryQueued', additionalProperties: false },
);

/** What `POST …/targets/{name}/redeliveries` answers when a job starts (202); poll GET …/redelivery-jobs/{jobId}. */
export const RedeliveryJobStartedView = Type.Object(
  {
    jobId: Type.String({ pattern: '^rdj_' }),
    status: Type.Literal('running'),
    total: Type.Integer({ description: 'failed deliveries in the range when the job started' }),
  },
  { title: 'RedeliveryJobStarted', additionalProperties: false },
);

/** What `POST …/targets/{name}/redeliveries` with dryRun answers (200): nothing is sent. */
export const RedeliveryDryRunView = Type.Object(
  {
    count: Type.Integer({ description: 'failed deliveries a job over the range would hand over now' }),
    target: Type.String({ description: "the target's name" }),
    from: time(),
    to: time(),
  },
  { title: 'RedeliveryDryRun', additionalProperties: false },
);

/** `GET /v1/tenants/{tenant}/queues/{name}/events`: a page of the queue's events. */
export const EventListView = pageOf(EventListItemView, 'EventList');

/** What `GET /v1/tenants/{tenant}/sandbox/runs/{runId}` answers: the run's events with their simulated attempts. */
export const SandboxRunView = Type.Object(
  {
    runId: Type.String(),
    tenantPublicId: Type.String({ pattern: '^ten_' }),
    events: Type.Array(EventView, { description: 'in order received, at most 1000; without their content (retained, contentType, headers, body)' }),
  },
  { title: 'SandboxRun', additionalProperties: false },
);
