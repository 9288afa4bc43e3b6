import { packFields, PACKED_FIELDS_MARK, type PackedField } from '../guard-marks.js';
import { UWS_NAME_BYTE, UWS_VALUE_BYTE } from './byte-classes.js';
import { contiguous } from './contiguous.js';
import type { HeadField, RequestHead } from './parsed-head.js';

/** Fields uWS 20.30 parses in one head; a 49th leaves the request unanswered. */
export const UWS_MAX_FIELDS = 48;
/** host, content-length, connection and the packed-fields mark. */
const FIXED_FIELDS = 4;
/** Fields a head may have to go to uWS as it came: Host and Content-Length among them. */
export const UWS_VERBATIM_FIELDS = UWS_MAX_FIELDS - FIXED_FIELDS;
const COMMA = Buffer.from(', ');

/**
 * The one form in which uWS sees a request (with `body`: the request whole, head and body in one buffer): a request line built here (HTTP/1.1,
 * origin-form, HEAD sent as GET so the front can drop the body), `host`, the
 * client's fields with lower-case names, one line per name (repeats joined
 * with ", " as RFC 9110 §5.3 allows), `content-length` framing for the
 * de-chunked body, `connection: close` when the exchange ends the connection,
 * and nothing else: no Transfer-Encoding, no trailers, no Expect, no bytes
 * the client placed. A field uWS could not carry unchanged (a name outside
 * `[a-z0-9-]`, a value byte outside visible ASCII, SP and HTAB, or more names
 * than uWS takes) goes into the packed-fields mark (guard-marks.ts).
 */
export function canonicalHead(head: RequestHead, bodyLength: number, body: readonly Buffer[] = []): Buffer {
  if (head.verbatim) {
    if (body.length === 0) return head.raw;
    // Head and body are usually one slice of the chunk that was read: no copy at all.
    const parts = [head.raw, ...body];
    return contiguous(parts) ?? Buffer.concat(parts);
  }
  const out = new HeadWriter(head.raw);
  if (head.lineCanonical) out.copy(0, head.requestLineEnd + 2);
  else out.text(`${head.method === 'HEAD' ? 'GET' : head.method} ${head.target} HTTP/1.1\r\n`);
  if (head.hostLine !== null) out.copy(head.hostLine[0], head.hostLine[1]);
  else out.text(`host: ${head.host}\r\n`);
  if (head.fields.length <= UWS_MAX_FIELDS - FIXED_FIELDS && head.fields.every((f) => f.carriable)) {
    // Every line goes as it came: uWS lower-cases names and trims SP/HTAB around values itself, and repeats reach the exchange joined.
    for (const f of head.fields) out.copy(f.start, f.end + 2);
  } else {
    out.text(packedFields(head.fields));
  }
  let tail = '';
  if (bodyLength > 0 || head.framed) tail += `content-length: ${bodyLength}\r\n`;
  if (head.close) tail += 'connection: close\r\n';
  out.text(`${tail}\r\n`);
  for (const part of body) out.buffer(part);
  return out.done();
}

/** Some names uWS cannot carry, or more of them than it takes: one line per name, and the rest in the mark. */
function packedFields(fields: readonly HeadField[]): string {
  let text = '';
  const packed: PackedField[] = [];
  let inPlace = 0;
  for (const [name, value] of byName(fields)) {
    if (inPlace < UWS_MAX_FIELDS - FIXED_FIELDS && carriable(name, value)) {
      text += `${name}: ${value.toString('latin1')}\r\n`;
      inPlace++;
    } else {
      packed.push({ name, value });
    }
  }
  if (packed.length > 0) text += `${PACKED_FIELDS_MARK}: ${packFields(packed)}\r\n`;
  return text;
}

/** Gathers ranges of the head's bytes and text, then copies them into one buffer; adjacent ranges are merged. */
class HeadWriter {
  private readonly parts: Array<Buffer | string> = [];
  private length = 0;
  private runStart = -1;
  private runEnd = -1;

  constructor(private readonly raw: Buffer) {}

  copy(start: number, end: number): void {
    if (start === this.runEnd) {
      this.runEnd = end;
      return;
    }
    this.closeRun();
    this.runStart = start;
    this.runEnd = end;
  }

  /** Bytes from elsewhere (the body), copied in after what came before. */
  buffer(bytes: Buffer): void {
    this.closeRun();
    this.parts.push(bytes);
    this.length += bytes.length;
  }

  text(text: string): void {
    this.closeRun();
    this.parts.push(text);
    this.length += text.length;
  }

  done(): Buffer {
    this.closeRun();
    const out = Buffer.allocUnsafe(this.length);
    let at = 0;
    for (const part of this.parts) at += typeof part === 'string' ? out.write(part, at, 'latin1') : part.copy(out, at);
    return out;
  }

  private closeRun(): void {
    if (this.runStart === -1) return;
    this.parts.push(this.raw.subarray(this.runStart, this.runEnd));
    this.length += this.runEnd - this.runStart;
    this.runStart = this.runEnd = -1;
  }
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
