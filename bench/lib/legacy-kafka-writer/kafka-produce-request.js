// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-produce-request.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
import { crc32c } from './crc32c.js';
import { requestHeaderSize, varintSize, WireReader, writeInt64, writeRequestHeader, writeString, writeVarint } from './kafka-wire.js';
/**
 * Produce v3 (api_key 0) with RecordBatch v2 (magic 2), encoded straight into
 * one Buffer per request: every size is computed first, then the request is
 * written front to back (keys as UTF-8 with `buf.write`, values copied once) and
 * each batch's CRC is taken over the bytes already in place. Nothing is
 * compressed: CPU is what an ingress node runs out of, and event bodies on a
 * local network are cheaper to send than to squeeze.
 *
 *   request   transactional_id int16 -1 (null), acks int16, timeout_ms int32,
 *             [topics: name string, [partitions: index int32, int32 size + RecordBatch]]
 *
 *   RecordBatch v2                                   (61 bytes before the records)
 *     base_offset int64 0        batch_length int32 (bytes after this field)
 *     partition_leader_epoch int32 -1                magic int8 2
 *     crc uint32 = CRC-32C of everything from attributes to the end
 *     attributes int16 0 (no compression, create time)  last_offset_delta int32 n-1
 *     base_timestamp int64       max_timestamp int64 (equal: one clock read per request)
 *     producer_id int64 -1       producer_epoch int16 -1       base_sequence int32 -1
 *     records count int32, then each record:
 *       length varint | attributes int8 0 | timestamp_delta varint 0 | offset_delta varint
 *       | key_length varint (-1 = null) + key | value_length varint + value | headers varint 0
 *
 *   response  [topics: name string, [partitions: index int32, error_code int16,
 *             base_offset int64, log_append_time_ms int64]], throttle_time_ms int32
 *
 * Produce v3 is the first version that carries RecordBatch v2 and is still
 * served by Kafka 4.x (which dropped v0–v2).
 */
export const PRODUCE_API_KEY = 0;
export const PRODUCE_VERSION = 3;
/** RecordBatch bytes before its first record. */
export const RECORD_BATCH_OVERHEAD = 61;
/** A partition's bytes in the request besides its RecordBatch: index and size. */
export const PARTITION_OVERHEAD = 8;
function recordBodySize(keyBytes, valueBytes, offsetDelta) {
    // attributes + timestamp_delta (0: one byte) + offset_delta + key + value + header count
    return 1 + 1 + varintSize(offsetDelta) + varintSize(keyBytes) + Math.max(keyBytes, 0) + varintSize(valueBytes) + valueBytes + 1;
}
/** Bytes of one record in a batch, its length prefix included. */
export function recordSize(keyBytes, valueBytes, offsetDelta) {
    const body = recordBodySize(keyBytes, valueBytes, offsetDelta);
    return varintSize(body) + body;
}
/** The whole framed request (size prefix included), ready for the socket. */
export function encodeProduceRequest(req) {
    const { records, keyBytes, batches } = req;
    let size = requestHeaderSize(req.clientId.length) + 2 + 2 + 4 + 4 + 2 + req.topic.length + 4;
    for (const batch of batches) {
        size += PARTITION_OVERHEAD + RECORD_BATCH_OVERHEAD;
        const { indices } = batch;
        for (let j = 0; j < indices.length; j++) {
            const i = indices[j];
            size += recordSize(keyBytes[i], records[i].value.length, j);
        }
    }
    const buf = Buffer.allocUnsafe(size);
    let at = writeRequestHeader(buf, PRODUCE_API_KEY, PRODUCE_VERSION, req.correlationId, req.clientId);
    at = buf.writeInt16BE(-1, at);
    at = buf.writeInt16BE(req.acks, at);
    at = buf.writeInt32BE(req.timeoutMs, at);
    at = buf.writeInt32BE(1, at);
    at = writeString(buf, at, req.topic);
    at = buf.writeInt32BE(batches.length, at);
    for (const batch of batches) {
        const { indices } = batch;
        at = buf.writeInt32BE(batch.partition, at);
        const sizeAt = at;
        at += 4;
        const batchStart = at;
        at = writeInt64(buf, at, 0);
        const lengthAt = at;
        at += 4;
        at = buf.writeInt32BE(-1, at);
        at = buf.writeInt8(2, at);
        const crcAt = at;
        at += 4;
        const crcFrom = at;
        at = buf.writeInt16BE(0, at);
        at = buf.writeInt32BE(indices.length - 1, at);
        at = writeInt64(buf, at, req.timestamp);
        at = writeInt64(buf, at, req.timestamp);
        at = writeInt64(buf, at, -1);
        at = buf.writeInt16BE(-1, at);
        at = buf.writeInt32BE(-1, at);
        at = buf.writeInt32BE(indices.length, at);
        for (let j = 0; j < indices.length; j++) {
            const i = indices[j];
            const record = records[i];
            const k = keyBytes[i];
            const value = record.value;
            at = writeVarint(buf, at, recordBodySize(k, value.length, j));
            buf[at++] = 0;
            buf[at++] = 0;
            at = writeVarint(buf, at, j);
            at = writeVarint(buf, at, k);
            if (k > 0)
                at += buf.write(record.key, at, k, 'utf8');
            at = writeVarint(buf, at, value.length);
            buf.set(value, at);
            at += value.length;
            buf[at++] = 0;
        }
        buf.writeInt32BE(at - batchStart, sizeAt);
        buf.writeInt32BE(at - lengthAt - 4, lengthAt);
        buf.writeUInt32BE(crc32c(buf, crcFrom, at), crcAt);
    }
    // A key whose byte count was given wrong would shift every later byte: refuse to send it.
    if (at !== size)
        throw new Error(`produce request encoded ${at} bytes, expected ${size}`);
    return buf;
}
/** Decodes a response body (the bytes after the correlation id). */
export function decodeProduceResponse(body) {
    const r = new WireReader(body);
    const topics = r.array((x) => ({
        name: x.string(),
        partitions: x.array((p) => ({ partition: p.int32(), errorCode: p.int16(), baseOffset: p.int64(), logAppendTimeMs: p.int64() })),
    }));
    return { topics, throttleTimeMs: r.int32() };
}
