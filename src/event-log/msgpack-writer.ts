/**
 * A msgpack encoder for what an event record holds: null, booleans, numbers,
 * strings, Buffers, arrays and plain objects. It writes the same bytes as
 * msgpackr's Packr({ useRecords: false, moreTypes: false }) (the unit test
 * compares them), so records stay readable by msgpackr everywhere, at about
 * half the cost: ingress encodes one record per request, and msgpackr's
 * general path (type dispatch, key handling, size guesses) showed up as 4-5 %
 * of an ingress node's CPU.
 *
 * Output goes into shared 64 KiB chunks and each record is a view of its
 * bytes (no allocation per record), as msgpackr does too; a chunk's bytes are
 * never written twice, so a view stays valid as long as it is held. A record
 * that does not fit in what is left of a chunk moves to a new one.
 *
 * Strings are written as UTF-8 with a lone surrogate as U+FFFD, as Buffer#write
 * does (msgpackr would write the invalid 3-byte form). undefined is
 * written as nil; event records never hold it.
 */

const CHUNK_BYTES = 64 * 1024;

let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
/** Where the next record starts in `chunk`. */
let start = 0;
/** Write position of the record being encoded. */
let at = 0;

export type Packable = null | boolean | number | string | Buffer | readonly Packable[] | { readonly [key: string]: Packable | undefined };

export function pack(value: Packable): Buffer {
  at = start;
  write(value);
  const out = chunk.subarray(start, at);
  // Keep the next record 8-byte aligned: cheap, and keeps views tidy.
  start = (at + 7) & ~7;
  if (start > chunk.length) start = chunk.length;
  return out;
}

/** Makes room for `bytes` more; moves the record so far into a new chunk when needed. */
function room(bytes: number): void {
  if (at + bytes <= chunk.length) return;
  const sofar = at - start;
  const next = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, (sofar + bytes) * 2));
  chunk.copy(next, 0, start, at);
  chunk = next;
  start = 0;
  at = sofar;
}

function write(value: Packable | undefined): void {
  if (value === null || value === undefined) {
    room(1);
    chunk[at++] = 0xc0;
  } else if (typeof value === 'string') {
    writeString(value);
  } else if (typeof value === 'number') {
    writeNumber(value);
  } else if (typeof value === 'boolean') {
    room(1);
    chunk[at++] = value ? 0xc3 : 0xc2;
  } else if (Buffer.isBuffer(value)) {
    writeBin(value);
  } else if (Array.isArray(value)) {
    const items = value as readonly Packable[];
    writeArrayHeader(items.length);
    for (let i = 0; i < items.length; i++) write(items[i]);
  } else {
    writeMap(value as { readonly [key: string]: Packable | undefined });
  }
}

function writeMap(object: { readonly [key: string]: Packable | undefined }): void {
  // msgpackr writes a plain object's size as map16 and fills it in after.
  room(3);
  chunk[at] = 0xde;
  // Relative to the record's start: room() may move the record to a new chunk meanwhile.
  const sizeAt = at + 1 - start;
  at += 3;
  let size = 0;
  for (const key in object) {
    writeString(key);
    write(object[key]);
    size++;
  }
  chunk.writeUInt16BE(size, start + sizeAt);
}

function writeArrayHeader(length: number): void {
  room(5);
  if (length < 0x10) chunk[at++] = 0x90 | length;
  else sized(length, 0, 0xdc, 0xdd);
}

/**
 * A type byte and `length` (or an unsigned value) in 1, 2 or 4 bytes, the
 * smallest form that holds it; `tag8` 0 when the type has no 1-byte form.
 * The caller has made room for 5 bytes.
 */
function sized(length: number, tag8: number, tag16: number, tag32: number): void {
  if (length < 0x100 && tag8 !== 0) {
    chunk[at] = tag8;
    chunk[at + 1] = length;
    at += 2;
  } else if (length < 0x10000) {
    chunk[at] = tag16;
    chunk.writeUInt16BE(length, at + 1);
    at += 3;
  } else {
    chunk[at] = tag32;
    chunk.writeUInt32BE(length, at + 1);
    at += 5;
  }
}

function writeNumber(value: number): void {
  room(9);
  if (value >>> 0 === value) {
    if (value < 0x80) chunk[at++] = value;
    else sized(value, 0xcc, 0xcd, 0xce);
  } else if (value >> 0 === value) {
    if (value >= -0x20) chunk[at++] = value & 0xff;
    else if (value >= -0x80) {
      chunk[at++] = 0xd0;
      chunk[at++] = value & 0xff;
    } else if (value >= -0x8000) {
      chunk[at] = 0xd1;
      chunk.writeInt16BE(value, at + 1);
      at += 3;
    } else {
      chunk[at] = 0xd2;
      chunk.writeInt32BE(value, at + 1);
      at += 5;
    }
  } else {
    // Timestamps in ms and everything else: float64, exact for integers up to 2^53.
    chunk[at] = 0xcb;
    chunk.writeDoubleBE(value, at + 1);
    at += 9;
  }
}

function writeString(value: string): void {
  const length = value.length;
  if (length < 64) {
    // A record's keys, ids and names: their header is known from the length
    // alone (1 byte under 32 characters, else 2), unless characters beyond
    // ASCII take a short string to 32 bytes or more: only then are the bytes moved.
    room(length * 3 + 2);
    if (length < 32) {
      const bytes = utf8Short(value, at + 1);
      if (bytes < 32) {
        chunk[at] = 0xa0 | bytes;
        at += 1 + bytes;
        return;
      }
      chunk.copyWithin(at + 2, at + 1, at + 1 + bytes);
      chunk[at] = 0xd9;
      chunk[at + 1] = bytes;
      at += 2 + bytes;
      return;
    }
    const bytes = utf8Short(value, at + 2);
    chunk[at] = 0xd9;
    chunk[at + 1] = bytes;
    at += 2 + bytes;
    return;
  }
  const maxBytes = length * 3;
  room(maxBytes + 5);
  // The header's size depends on the byte length, known only once written:
  // reserve for the worst case, then move the bytes back if a smaller header fits.
  const reserved = headerBytes(maxBytes);
  const bytes = (chunk as Utf8Writable).utf8Write(value, at + reserved, maxBytes);
  const needed = headerBytes(bytes);
  if (needed < reserved) chunk.copyWithin(at + needed, at + reserved, at + reserved + bytes);
  if (needed === 1) chunk[at++] = 0xa0 | bytes;
  else sized(bytes, 0xd9, 0xda, 0xdb);
  at += bytes;
}

/** Buffer's own UTF-8 writer without the argument checks of Buffer#write (it is a public method of Node's Buffer). */
type Utf8Writable = Buffer & { utf8Write(value: string, offset: number, length: number): number };

/**
 * UTF-8 of a short string, written in JS: for the ids, names and keys of a
 * record this beats a call into native code. Lone surrogates become U+FFFD,
 * as Buffer#write makes them.
 */
function utf8Short(value: string, offset: number): number {
  // A local: stores through the module's `chunk` re-read it each time.
  const buf = chunk;
  const length = value.length;
  let i = 0;
  // ASCII first (ids, names, keys): one compare and one store a character.
  for (; i < length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x80) break;
    buf[offset + i] = c;
  }
  if (i === length) return length;
  let o = offset + i;
  for (; i < length; i++) {
    let c = value.charCodeAt(i);
    if (c < 0x80) buf[o++] = c;
    else if (c < 0x800) {
      buf[o++] = 0xc0 | (c >> 6);
      buf[o++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = value.charCodeAt(i + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          i++;
          buf[o++] = 0xf0 | (c >> 18);
          buf[o++] = 0x80 | ((c >> 12) & 0x3f);
          buf[o++] = 0x80 | ((c >> 6) & 0x3f);
          buf[o++] = 0x80 | (c & 0x3f);
          continue;
        }
        c = 0xfffd;
      }
      buf[o++] = 0xe0 | (c >> 12);
      buf[o++] = 0x80 | ((c >> 6) & 0x3f);
      buf[o++] = 0x80 | (c & 0x3f);
    }
  }
  return o - offset;
}

function headerBytes(length: number): number {
  return length < 0x20 ? 1 : length < 0x100 ? 2 : length < 0x10000 ? 3 : 5;
}

function writeBin(value: Buffer): void {
  room(value.length + 5);
  sized(value.length, 0xc4, 0xc5, 0xc6);
  value.copy(chunk, at);
  at += value.length;
}
