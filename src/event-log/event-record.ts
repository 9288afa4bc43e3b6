import { Packr } from 'msgpackr';
import { pack, type Packable } from './msgpack-writer.js';

/**
 * One accepted event as it sits in the log. The body is the raw bytes as
 * received, never re-serialised, so receivers get exactly what the sender
 * posted (and payment signatures over those bytes stay valid).
 *
 *   key   = partition key (or null)           -> Kafka's murmur2 picks the partition
 *   value = msgpack(EventRecord)              -> version 1 layout below
 */
export interface EventRecord {
  v: 1;
  id: string;
  tenantPublicId: string;
  workspaceId: string;
  queueId: string;
  queueName: string;
  receivedAt: number;
  contentType: string | null;
  idempotencyKey: string | null;
  eventType: string | null;
  groupKey: string | null;
  partitionKey: string | null;
  /** X-Service-Path as received (the hops before this service). */
  path: string | null;
  body: Buffer;
  /**
   * Mapped headers lifted at accept (docs/api.md#ingress), as [name, value] pairs in
   * the queue's configured order; sent unchanged on every attempt.
   */
  mappedHeaders?: Array<[string, string]>;
  /**
   * Set when the event arrived through a `payments` queue whose Payments-Signature
   * was verified while recalculation was on: delivery may re-sign these bytes.
   */
  paymentsRecalc?: boolean;
  /** Sandbox route only (docs/delivery.md): deliveries are simulated, nothing leaves. */
  sandbox?: { failCode: number | null; failCount: number; runId: string | null };
  /**
   * W3C trace context the delivery attempts continue (src/ingress/trace-headers.ts):
   * the sender's traceparent as received, or the ingress span's when tracing is
   * on. Absent on records written before it existed, and for senders without one.
   */
  traceparent?: string;
  /** The sender's tracestate, kept only beside a valid traceparent. */
  tracestate?: string;
}

// Plain maps (no shared record structures): any process can decode any record
// without having seen the encoder's structure table. Decoding only: encoding
// goes through msgpack-writer.ts.
const packr = new Packr({ useRecords: false, moreTypes: false });

/** The record's msgpack bytes, written by msgpack-writer.ts (same bytes as packr.pack, cheaper). */
export function encodeEvent(record: EventRecord): Buffer {
  return pack(record as unknown as Packable);
}

export function decodeEvent(bytes: Buffer): EventRecord {
  const value = packr.unpack(bytes) as EventRecord;
  if (!value || value.v !== 1 || typeof value.id !== 'string') throw new Error('not a v1 event record');
  // msgpack gives a Uint8Array view for bin; delivery wants a Buffer without copying.
  if (!Buffer.isBuffer(value.body)) {
    const b = value.body as Uint8Array;
    value.body = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  }
  return value;
}
