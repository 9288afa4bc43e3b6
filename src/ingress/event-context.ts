import { ServiceError, type ErrorCode } from '../errors.js';
import { DEFAULT_SOURCES, type ContextSources } from './queue-directory.js';
import { RequestValues } from './request-values.js';

/** The routing context of an event: type, group key and partition key. */
export interface EventContext {
  eventType: string | null;
  groupKey: string | null;
  partitionKey: string | null;
}

type ContextField = 'event_type' | 'group' | 'partition';

// C0 controls and DEL; C1 controls (U+0080–U+009F) too.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function codeName(field: ContextField): string {
  return field === 'event_type' ? 'context_event_type_key' : `context_${field}_key`;
}

/** Validates one context value: no control characters, at most `maxBytes` UTF-8 bytes. */
export function checkContextValue(field: ContextField, value: string, maxBytes: number): void {
  const name = codeName(field);
  if (CONTROL.test(value)) throw new ServiceError(`${name}_invalid` as ErrorCode);
  // Cheap bound first: a string of n UTF-16 units has at most 3n UTF-8 bytes.
  if (value.length * 3 > maxBytes && Buffer.byteLength(value) > maxBytes) {
    const label = field === 'event_type' ? 'event type' : `${field} key`;
    throw new ServiceError(`${name}_too_long` as ErrorCode, `The ${label} is over the limit of ${maxBytes} bytes.`);
  }
}

function one(field: ContextField, value: string | null | undefined, maxBytes: number): string | null {
  if (value === undefined) {
    throw new ServiceError(`${codeName(field)}_invalid` as ErrorCode, 'A context value read from the body must be a string, a number or a boolean.');
  }
  if (value !== null) checkContextValue(field, value, maxBytes);
  return value;
}

/**
 * Reads the context from where the queue says (header by default, or a query
 * parameter or top-level body field per queue or workspace configuration) and
 * validates it. Only the configured source is read: a queue that takes the
 * type from the body ignores X-Service-Event-Type (docs/api.md#ingress).
 */
export function extractContext(sources: ContextSources, values: RequestValues, maxBytes: number): EventContext {
  return {
    eventType: one('event_type', values.read(sources.eventType), maxBytes),
    groupKey: one('group', values.read(sources.groupKey), maxBytes),
    partitionKey: one('partition', values.read(sources.partitionKey), maxBytes),
  };
}

/** Reads the context from the default headers (docs/api.md#configuration-api). */
export function contextFromHeaders(headers: Readonly<Record<string, string>>, maxBytes: number): EventContext {
  return extractContext(DEFAULT_SOURCES, new RequestValues(headers, '', null), maxBytes);
}
