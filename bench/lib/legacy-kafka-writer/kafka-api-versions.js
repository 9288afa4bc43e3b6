// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-api-versions.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
import { requestHeaderSize, WireReader, writeRequestHeader } from './kafka-wire.js';
/**
 * ApiVersions v0 (api_key 18): the version range a broker serves per API. The
 * producer asks once at connect, so a broker too old or too new for the
 * versions it speaks fails at boot with a clear message instead of with
 * UNSUPPORTED_VERSION on the first event.
 *
 *   request   (no body)
 *   response  error_code int16, [api_key int16, min_version int16, max_version int16]
 */
export const API_VERSIONS_API_KEY = 18;
export function encodeApiVersionsRequest(correlationId, clientId) {
    const buf = Buffer.allocUnsafe(requestHeaderSize(clientId.length));
    writeRequestHeader(buf, API_VERSIONS_API_KEY, 0, correlationId, clientId);
    return buf;
}
export function decodeApiVersionsResponse(body) {
    const r = new WireReader(body);
    return {
        errorCode: r.int16(),
        apis: r.array((x) => ({ apiKey: x.int16(), minVersion: x.int16(), maxVersion: x.int16() })),
    };
}
