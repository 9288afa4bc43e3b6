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

export interface ApiVersionRange {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

export function encodeApiVersionsRequest(correlationId: number, clientId: Buffer): Buffer {
  const buf = Buffer.allocUnsafe(requestHeaderSize(clientId.length));
  writeRequestHeader(buf, API_VERSIONS_API_KEY, 0, correlationId, clientId);
  return buf;
}

export function decodeApiVersionsResponse(body: Buffer): { errorCode: number; apis: ApiVersionRange[] } {
  const r = new WireReader(body);
  return {
    errorCode: r.int16(),
    apis: r.array((x) => ({ apiKey: x.int16(), minVersion: x.int16(), maxVersion: x.int16() })),
  };
}
