import { ServiceError } from '../errors.js';
import type { MappedHeader } from '../routing/queue-settings.js';
import type { RequestValues } from './request-values.js';

// What a header value can carry on the way out (node's http client refuses
// anything else): HTAB, visible ASCII and space, and bytes 0x80-0xFF.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Lifts the queue's mapped headers at accept (docs/api.md#ingress): each value is
 * read from its header, query parameter or body field now and stored with the
 * event, so every delivery attempt sends exactly the same value. A required
 * one that finds nothing refuses the event (outbound_header_required); a value
 * no header could carry refuses it too, rather than failing every delivery.
 */
export function liftMappedHeaders(
  mapped: readonly MappedHeader[],
  values: RequestValues,
  maxBytes: number,
): Array<[string, string]> | undefined {
  if (mapped.length === 0) return undefined;
  const out: Array<[string, string]> = [];
  for (const m of mapped) {
    const value = values.read(m.from);
    if (value === undefined) {
      throw new ServiceError('outbound_header_invalid', `The value for mapped header ${m.as} must be a string, a number or a boolean.`);
    }
    if (value === null) {
      if (m.required) {
        throw new ServiceError('outbound_header_required', `Mapped header ${m.as} is required and its ${m.from.source} ${m.from.name} has no value.`);
      }
      continue;
    }
    if (!HEADER_VALUE.test(value)) {
      throw new ServiceError('outbound_header_invalid', `The value for mapped header ${m.as} holds characters a header cannot carry.`);
    }
    if (Buffer.byteLength(value) > maxBytes) {
      throw new ServiceError('outbound_header_invalid', `The value for mapped header ${m.as} is over the limit of ${maxBytes} bytes.`);
    }
    out.push([m.as, value]);
  }
  return out.length > 0 ? out : undefined;
}
