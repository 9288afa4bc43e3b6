// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-metadata.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
import { requestHeaderSize, WireReader, writeRequestHeader, writeString } from './kafka-wire.js';
/**
 * Metadata v4 (api_key 3): which brokers there are and which one leads each
 * partition of the topics asked for. v4 is the first version with
 * allow_auto_topic_creation, so asking about a missing topic cannot create it;
 * brokers from Kafka 1.0 through 4.x answer it.
 *
 *   request   [topics: int16 string] allow_auto_topic_creation int8
 *   response  throttle_time_ms int32
 *             [brokers: node_id int32, host string, port int32, rack nullable string]
 *             cluster_id nullable string, controller_id int32
 *             [topics: error_code int16, name string, is_internal int8,
 *               [partitions: error_code int16, partition_index int32, leader_id int32,
 *                 [replica_nodes int32], [isr_nodes int32]]]
 */
export const METADATA_API_KEY = 3;
export const METADATA_VERSION = 4;
/** The whole framed request (size prefix included), ready for the socket. */
export function encodeMetadataRequest(correlationId, clientId, topics) {
    const names = topics.map((t) => Buffer.from(t));
    const size = requestHeaderSize(clientId.length) + 4 + names.reduce((n, b) => n + 2 + b.length, 0) + 1;
    const buf = Buffer.allocUnsafe(size);
    let at = writeRequestHeader(buf, METADATA_API_KEY, METADATA_VERSION, correlationId, clientId);
    at = buf.writeInt32BE(names.length, at);
    for (const name of names)
        at = writeString(buf, at, name);
    buf.writeInt8(0, at);
    return buf;
}
/** Decodes a response body (the bytes after the correlation id). */
export function decodeMetadataResponse(body) {
    const r = new WireReader(body);
    const int32 = (x) => x.int32();
    return {
        throttleTimeMs: r.int32(),
        brokers: r.array((x) => ({ nodeId: x.int32(), host: x.string(), port: x.int32(), rack: x.nullableString() })),
        clusterId: r.nullableString(),
        controllerId: r.int32(),
        topics: r.array((x) => ({
            errorCode: x.int16(),
            name: x.string(),
            isInternal: x.int8() !== 0,
            partitions: x.array((p) => ({
                errorCode: p.int16(),
                partition: p.int32(),
                leader: p.int32(),
                replicas: p.array(int32),
                isr: p.array(int32),
            })),
        })),
    };
}
