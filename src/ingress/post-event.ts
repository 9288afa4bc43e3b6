import type { IngressAuth } from '../auth/ingress-auth.js';
import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import { newEventId } from '../ids.js';
import type { EventLogWriter } from '../event-log/event-log.js';
import type { EventRecord } from '../event-log/event-record.js';
import { answeredChannel } from '../observability/channels.js';
import type { Tracing } from '../observability/tracing.js';
import { acceptedJson } from './accepted-view.js';
import { extractContext } from './event-context.js';
import { checkHeaderValues, checkIdempotencyKey } from './header-check.js';
import { checkHopPath } from './hop-path.js';
import type { IdempotencyGate } from './idempotency.js';
import { liftMappedHeaders } from './mapped-headers.js';
import type { QueueDirectory, QueueView } from './queue-directory.js';
import { RequestValues } from './request-values.js';
import { hasSandboxParams, readSandboxParams } from './sandbox-query.js';
import { attachTraceContext } from './trace-headers.js';

export interface PostEventDeps {
  queues: QueueDirectory;
  auth: IngressAuth;
  eventLog: EventLogWriter;
  idempotency: IdempotencyGate;
  keyMaxBytes: number;
  idempotencyKeyMaxBytes: number;
  mappedHeaderMaxBytes: number;
  /** Child spans for auth and append, and the trace context stored with the event. */
  tracing: Tracing;
}

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });

/**
 * POST /events/{tenant}/{queue} and its sandbox twin. The steps, each of which
 * may refuse with its docs/api.md#errors code; nothing refused reaches the log:
 *
 *   framing ─► resolve queue ─► mode usable ─► authenticate ─► IP allowlist ─► queue state
 *   ─► sandbox parameters ─► header hygiene ─► X-Service-Path ─► body, context,
 *   mapped headers ─► Idempotency-Key ─► append ─► 202 once Kafka acknowledged
 *
 * Credentials come before anything that reveals the queue's configuration
 * (except queue_paused: a queue with no valid mode cannot check any credential).
 */
export function postEventHandler(deps: PostEventDeps, sandbox: boolean) {
  return async (exchange: Exchange): Promise<void> => {
    const [tenant, queueName] = exchange.params as [string, string];
    const found = deps.queues.resolve(decodeSegment(tenant), decodeSegment(queueName));
    const queue = found instanceof Promise ? await found : found;
    if (!queue) throw new ServiceError('not_found', 'No such workspace or queue.');
    const authenticated = deps.tracing.enabled
      ? await deps.tracing.step(exchange, 'ingress auth', () => authenticate(deps, exchange, queue))
      : await authenticate(deps, exchange, queue);
    if (queue.allowlist && !queue.allowlist.allows(exchange.remoteAddress)) throw new ServiceError('ip_not_allowed');
    if (queue.settings.archived || queue.workspaceArchived) throw new ServiceError('queue_archived');
    if (queue.settings.ingress === 'closed') throw new ServiceError('ingress_closed');

    let sandboxParams: EventRecord['sandbox'];
    if (sandbox) sandboxParams = readSandboxParams(exchange.query);
    else if (hasSandboxParams(exchange.query)) throw new ServiceError('sandbox_query_not_allowed');

    const headers = exchange.headers;
    checkHeaderValues(headers, queue.sources);
    const path = checkHopPath(headers['x-service-path'], queue.ownSegment, queue.settings.hopBudget);
    let idempotencyKey = checkIdempotencyKey(headers['idempotency-key'], deps.idempotencyKeyMaxBytes);
    // An inbound source's retries carry the same delivery id: it deduplicates them (docs/api.md#ingress-auth-modes).
    if (idempotencyKey === null && queue.deliveryIdHeader !== null) {
      idempotencyKey = checkIdempotencyKey(headers[queue.deliveryIdHeader], deps.idempotencyKeyMaxBytes, queue.deliveryIdHeader);
    }

    const body = await exchange.body;
    const values = new RequestValues(headers, exchange.query, body);
    if (queue.readsBody) values.requireJsonBody();
    const ctx = extractContext(queue.sources, values, deps.keyMaxBytes);
    if (queue.settings.groupKeyRequired && ctx.groupKey === null) throw new ServiceError('context_group_key_required');
    const mappedHeaders = liftMappedHeaders(queue.settings.mappedHeaders, values, deps.mappedHeaderMaxBytes);

    const receivedAt = Date.now();
    const record: EventRecord = {
      v: 1,
      id: newEventId(receivedAt),
      tenantPublicId: queue.tenantPublicId,
      workspaceId: queue.workspaceId,
      queueId: queue.queueId,
      queueName: queue.queueName,
      receivedAt,
      contentType: headers['content-type'] ?? null,
      idempotencyKey,
      eventType: ctx.eventType,
      groupKey: ctx.groupKey,
      partitionKey: ctx.partitionKey,
      path,
      body,
    };
    if (mappedHeaders) record.mappedHeaders = mappedHeaders;
    if (authenticated.paymentsVerified && queue.settings.paymentsSignatureRecalculation) record.paymentsRecalc = true;
    if (sandboxParams) record.sandbox = sandboxParams;
    if (deps.tracing.enabled || headers.traceparent !== undefined) attachTraceContext(record, exchange, deps.tracing);

    if (idempotencyKey !== null && queue.settings.dedupWindowSeconds > 0) {
      await appendOnce(deps, exchange, queue, record, idempotencyKey, sandbox);
    } else {
      await append(deps, exchange, record);
      accepted(exchange, queue, record);
    }
  };
}

// Not async: no extra promise per request on the untraced path.
function authenticate(deps: PostEventDeps, exchange: Exchange, queue: QueueView): ReturnType<IngressAuth['authenticate']> {
  if (queue.settings.authMode === 'api_key') return deps.auth.authenticate(exchange, queue);
  return deps.auth.checkUsable(queue).then(() => deps.auth.authenticate(exchange, queue));
}

function append(deps: PostEventDeps, exchange: Exchange, record: EventRecord): Promise<void> {
  if (deps.tracing.enabled) return deps.tracing.step(exchange, 'ingress append', () => appendRecord(deps, exchange, record));
  return appendRecord(deps, exchange, record);
}

async function appendRecord(deps: PostEventDeps, exchange: Exchange, record: EventRecord): Promise<void> {
  // Timed only for the metrics, which read it from the answer (Exchange.ingress).
  const started = answeredChannel.hasSubscribers ? performance.now() : 0;
  try {
    await deps.eventLog.append(record);
  } catch {
    throw new ServiceError('unavailable', 'The event log did not acknowledge the event; it was not accepted.');
  }
  if (started !== 0) exchange.ingress.appendMs = performance.now() - started;
}

/** The Idempotency-Key path: append only as the winner of the key; a duplicate replays the first id. */
async function appendOnce(deps: PostEventDeps, exchange: Exchange, queue: QueueView, record: EventRecord, key: string, sandbox: boolean): Promise<void> {
  // Sandbox and production events of one queue never answer for each other.
  const scope = sandbox ? `sb:${queue.queueId}` : queue.queueId;
  const claim = await deps.idempotency.claim(scope, key, record.id, queue.settings.dedupWindowSeconds);
  if (claim.kind === 'replay') {
    exchange.ingress.replayed = true;
    exchange.send(202, acceptedJson({ eventId: claim.eventId, replayed: true }), JSON_HEADERS);
    return;
  }
  try {
    await append(deps, exchange, record);
  } catch (err) {
    // Let a waiting duplicate (or the sender's retry) take over; best effort,
    // the reservation expires on its own otherwise.
    await claim.release().catch(() => {});
    throw err;
  }
  // The event is durable: answer 202 even if marking the key done fails. Then
  // duplicates wait on the pending reservation and, once it expires, are taken
  // as new: under a Redis failure at this exact point dedup degrades to
  // at-least-once, it never loses or misreports an event.
  await claim.commit().catch(() => {});
  accepted(exchange, queue, record);
}

function accepted(exchange: Exchange, queue: QueueView, record: EventRecord): void {
  const outcome = exchange.ingress;
  outcome.queue = queue;
  outcome.bytes = record.body.length;
  exchange.send(202, acceptedJson({ eventId: record.id }), JSON_HEADERS);
}

// No workspace id or queue name holds a control character or runs past 200
// characters; refusing them here also keeps NUL (which Postgres cannot take in
// text) away from the query.
const NOT_A_NAME = /[\u0000-\u001f\u007f]/;

function decodeSegment(segment: string): string {
  let decoded = segment;
  if (segment.includes('%')) {
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      decoded = '\u0000';
    }
  }
  if (decoded.length === 0 || decoded.length > 200 || NOT_A_NAME.test(decoded)) {
    throw new ServiceError('not_found', 'No such workspace or queue.');
  }
  return decoded;
}
