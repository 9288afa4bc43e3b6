// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/event-record.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
import { Packr } from 'msgpackr';
import { pack } from './msgpack-writer.js';
// Plain maps (no shared record structures): any process can decode any record
// without having seen the encoder's structure table. Decoding only: encoding
// goes through msgpack-writer.ts.
const packr = new Packr({ useRecords: false, moreTypes: false });
/** The record's msgpack bytes, written by msgpack-writer.ts (same bytes as packr.pack, cheaper). */
export function encodeEvent(record) {
    return pack(record);
}
export function decodeEvent(bytes) {
    const value = packr.unpack(bytes);
    if (!value || value.v !== 1 || typeof value.id !== 'string')
        throw new Error('not a v1 event record');
    // msgpack gives a Uint8Array view for bin; delivery wants a Buffer without copying.
    if (!Buffer.isBuffer(value.body)) {
        const b = value.body;
        value.body = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    }
    return value;
}
