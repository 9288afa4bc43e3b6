import { isUtf8 } from 'node:buffer';

/**
 * How the header guard's front hands uWS header fields that uWS 20.30 cannot
 * carry itself. That build parses only names of `[A-Za-z0-9-]` (a name with
 * `_`, `.` or `!` leaves the request unanswered), at most 48 fields, and it
 * trims bytes >= 0x80 at the ends of a value. So the front packs every such
 * field into one mark header of base64url text, and the exchange unpacks it
 * before any handler sees the headers.
 *
 * Every name under the prefix is reserved: the front drops client fields that
 * use it, so only the front can set a mark.
 */
export const GUARD_PREFIX = 'x-streamgate-guard-';
/** `b64url(name).b64url(value bytes),…`: fields uWS cannot carry as they are. */
export const PACKED_FIELDS_MARK = `${GUARD_PREFIX}fields`;

/** One field as the front packs it: a lower-case name and the raw value bytes. */
export interface PackedField {
  name: string;
  value: Buffer;
}

export function packFields(fields: readonly PackedField[]): string {
  return fields.map((f) => `${Buffer.from(f.name, 'latin1').toString('base64url')}.${f.value.toString('base64url')}`).join(',');
}

/**
 * Unpacks the mark into `headers` (names lower-case; a name already present is
 * joined with ', ', as uWS's own fields are) and removes it. Value bytes that
 * are not UTF-8 become U+FFFD, which the header checks refuse.
 */
export function unpackFields(headers: Record<string, string>): void {
  const packed = headers[PACKED_FIELDS_MARK];
  if (packed === undefined) return;
  delete headers[PACKED_FIELDS_MARK];
  for (const item of packed.split(',')) {
    const dot = item.indexOf('.');
    if (dot <= 0) continue;
    const name = Buffer.from(item.slice(0, dot), 'base64url').toString('latin1');
    const value = decodeValue(Buffer.from(item.slice(dot + 1), 'base64url'));
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
}

function decodeValue(bytes: Buffer): string {
  return isUtf8(bytes) ? bytes.toString('utf8') : new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}
