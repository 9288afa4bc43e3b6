// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-wire.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
/**
 * Kafka wire primitives shared by the request encoders and response decoders
 * (kafka-metadata.ts, kafka-produce-request.ts, kafka-api-versions.ts). No I/O.
 *
 * Every request starts with the same framing and header v1:
 *
 *   int32 size            bytes after this field
 *   int16 api_key
 *   int16 api_version
 *   int32 correlation_id  echoed first in the response (responses come in order)
 *   int16 + bytes         client_id
 *
 * Integers are big-endian; strings are int16 length + UTF-8 (-1 = null); the
 * RecordBatch's own fields use zigzag varints (protobuf style).
 */
/** Bytes of the size prefix plus request header v1 for a client id of `clientIdBytes`. */
export function requestHeaderSize(clientIdBytes) {
    return 4 + 2 + 2 + 4 + 2 + clientIdBytes;
}
/**
 * Writes the size prefix and header v1 at the start of `buf` (the whole
 * request, so its size is `buf.length - 4`); returns where the body starts.
 */
export function writeRequestHeader(buf, apiKey, apiVersion, correlationId, clientId) {
    buf.writeInt32BE(buf.length - 4, 0);
    buf.writeInt16BE(apiKey, 4);
    buf.writeInt16BE(apiVersion, 6);
    buf.writeInt32BE(correlationId, 8);
    buf.writeInt16BE(clientId.length, 12);
    buf.set(clientId, 14);
    return 14 + clientId.length;
}
/** An int16-length string field (the bytes already UTF-8). */
export function writeString(buf, offset, bytes) {
    buf.writeInt16BE(bytes.length, offset);
    buf.set(bytes, offset + 2);
    return offset + 2 + bytes.length;
}
/** An int64 from a non-negative safe integer (timestamps) or -1, without BigInt. */
export function writeInt64(buf, offset, value) {
    if (value === -1) {
        buf.writeInt32BE(-1, offset);
        buf.writeInt32BE(-1, offset + 4);
    }
    else {
        buf.writeUInt32BE(Math.floor(value / 0x1_0000_0000), offset);
        buf.writeUInt32BE(value >>> 0, offset + 4);
    }
    return offset + 8;
}
/** Bytes of the zigzag varint of the int32 `n`. */
export function varintSize(n) {
    const z = ((n << 1) ^ (n >> 31)) >>> 0;
    return z < 0x80 ? 1 : z < 0x4000 ? 2 : z < 0x20_0000 ? 3 : z < 0x1000_0000 ? 4 : 5;
}
/** Writes the zigzag varint of the int32 `n`; returns the offset after it. */
export function writeVarint(buf, offset, n) {
    let z = ((n << 1) ^ (n >> 31)) >>> 0;
    while (z >= 0x80) {
        buf[offset++] = (z & 0x7f) | 0x80;
        z >>>= 7;
    }
    buf[offset++] = z;
    return offset;
}
/** Raised when a response is shorter than its own fields say. */
export class TruncatedResponseError extends RangeError {
    constructor(what) {
        super(`truncated Kafka response while reading ${what}`);
        this.name = 'TruncatedResponseError';
    }
}
/** A cursor over one response body (after size and correlation id). */
export class WireReader {
    buf;
    offset;
    constructor(buf, offset = 0) {
        this.buf = buf;
        this.offset = offset;
    }
    need(bytes, what) {
        const at = this.offset;
        if (at + bytes > this.buf.length)
            throw new TruncatedResponseError(what);
        this.offset = at + bytes;
        return at;
    }
    int8() {
        return this.buf.readInt8(this.need(1, 'int8'));
    }
    int16() {
        return this.buf.readInt16BE(this.need(2, 'int16'));
    }
    int32() {
        return this.buf.readInt32BE(this.need(4, 'int32'));
    }
    int64() {
        return this.buf.readBigInt64BE(this.need(8, 'int64'));
    }
    nullableString() {
        const length = this.int16();
        if (length < 0)
            return null;
        const at = this.need(length, 'string');
        return this.buf.toString('utf8', at, at + length);
    }
    string() {
        const value = this.nullableString();
        if (value === null)
            throw new TypeError('Kafka response has a null where a string is required');
        return value;
    }
    /** An int32-counted array; a count of -1 (null array) reads as empty. */
    array(item) {
        const count = this.int32();
        // Each item is at least one byte: a count beyond what is left is corrupt.
        if (count > this.buf.length - this.offset)
            throw new TruncatedResponseError('array');
        const out = [];
        for (let i = 0; i < count; i++)
            out.push(item(this));
        return out;
    }
}
