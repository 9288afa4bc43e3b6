import { packFields, PACKED_FIELDS_MARK, type PackedField } from '../guard-marks.js';
import { UWS_NAME_BYTE, UWS_VALUE_BYTE } from './byte-classes.js';
import type { HeadField, RequestHead } from './request-parser.js';

/** Fields uWS 20.30 parses in one head; a 49th leaves the request unanswered. */
export const UWS_MAX_FIELDS = 48;
/** host, content-length, connection and the packed-fields mark. */
const FIXED_FIELDS = 4;
const COMMA = Buffer.from(', ');

/**
 * The one form in which uWS sees a request: a request line built here (HTTP/1.1,
 * origin-form, HEAD sent as GET so the front can drop the body), `host`, the
 * client's fields with lower-case names, one line per name (repeats joined
 * with ", " as RFC 9110 §5.3 allows), `content-length` framing for the
 * de-chunked body, `connection: close` when the exchange ends the connection,
 * and nothing else: no Transfer-Encoding, no trailers, no Expect, no bytes
 * the client placed. A field uWS could not carry unchanged (a name outside
 * `[a-z0-9-]`, a value byte outside visible ASCII, SP and HTAB, or more names
 * than uWS takes) goes into the packed-fields mark (guard-marks.ts).
 */
export function canonicalHead(head: RequestHead, bodyLength: number): Buffer {
  const method = head.method === 'HEAD' ? 'GET' : head.method;
  let text = `${method} ${head.target} HTTP/1.1\r\nhost: ${head.host}\r\n`;
  const packed: PackedField[] = [];
  let inPlace = 0;
  for (const [name, value] of byName(head.fields)) {
    if (inPlace < UWS_MAX_FIELDS - FIXED_FIELDS && carriable(name, value)) {
      text += `${name}: ${value.toString('latin1')}\r\n`;
      inPlace++;
    } else {
      packed.push({ name, value });
    }
  }
  if (packed.length > 0) text += `${PACKED_FIELDS_MARK}: ${packFields(packed)}\r\n`;
  if (bodyLength > 0 || head.framed) text += `content-length: ${bodyLength}\r\n`;
  if (head.close) text += 'connection: close\r\n';
  return Buffer.from(`${text}\r\n`, 'latin1');
}

/** One value per name, in first-seen order; repeats joined with ", ". */
function byName(fields: readonly HeadField[]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const { name, value } of fields) {
    const seen = out.get(name);
    out.set(name, seen === undefined ? value : Buffer.concat([seen, COMMA, value]));
  }
  return out;
}

function carriable(name: string, value: Buffer): boolean {
  for (let i = 0; i < name.length; i++) if (!UWS_NAME_BYTE[name.charCodeAt(i)]) return false;
  for (const byte of value) if (!UWS_VALUE_BYTE[byte]) return false;
  return true;
}
