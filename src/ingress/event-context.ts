import { ServiceError, type ErrorCode } from '../errors.js';

/** The routing context of an event: type, group key and partition key. */
export interface EventContext {
  eventType: string | null;
  groupKey: string | null;
  partitionKey: string | null;
}

type ContextField = 'event_type' | 'group' | 'partition';

// C0 controls and DEL; C1 controls (U+0080–U+009F) too.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Validates one context value: no control characters, at most `maxBytes` UTF-8 bytes. */
export function checkContextValue(field: ContextField, value: string, maxBytes: number): void {
  const name = field === 'event_type' ? 'context_event_type_key' : `context_${field}_key`;
  if (CONTROL.test(value)) throw new ServiceError(`${name}_invalid` as ErrorCode);
  if (Buffer.byteLength(value) > maxBytes) {
    const label = field === 'event_type' ? 'event type' : `${field} key`;
    throw new ServiceError(`${name}_too_long` as ErrorCode, `The ${label} is over the limit of ${maxBytes} bytes.`);
  }
}

/** Reads the context from the default headers (contract §4). */
export function contextFromHeaders(headers: Readonly<Record<string, string>>, maxBytes: number): EventContext {
  // An empty header carries no key: it counts as absent (and fails a required group key).
  const read = (name: string) => headers[name] || null;
  const ctx: EventContext = {
    eventType: read('x-service-event-type'),
    groupKey: read('x-service-group-key'),
    partitionKey: read('x-service-partition-key'),
  };
  if (ctx.eventType !== null) checkContextValue('event_type', ctx.eventType, maxBytes);
  if (ctx.groupKey !== null) checkContextValue('group', ctx.groupKey, maxBytes);
  if (ctx.partitionKey !== null) checkContextValue('partition', ctx.partitionKey, maxBytes);
  return ctx;
}
