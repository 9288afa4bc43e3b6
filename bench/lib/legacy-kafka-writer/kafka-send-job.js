// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-send-job.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
const RECORD_PENDING = 0;
const RECORD_SETTLED = 1;
/**
 * One `send` call's records and what is known about each (key size, key hash,
 * settled or not). Every record settles exactly once, whichever path gets there
 * first: its partition's ack, a final error, the retry deadline, or the catch-all
 * for a bug; later calls for a settled record do nothing.
 */
export class SendJob {
    records;
    keyBytes;
    /** murmur2(key) & 0x7fffffff, or -1 for a null key. */
    hashes;
    state;
    lastError = null;
    constructor(records) {
        this.records = records;
        this.keyBytes = new Int32Array(records.length);
        this.hashes = new Int32Array(records.length);
        this.state = new Uint8Array(records.length);
    }
    resolve(indices) {
        for (const i of indices) {
            if (this.state[i] === RECORD_PENDING) {
                this.state[i] = RECORD_SETTLED;
                this.records[i].resolve();
            }
        }
    }
    reject(indices, err) {
        for (const i of indices) {
            if (this.state[i] === RECORD_PENDING) {
                this.state[i] = RECORD_SETTLED;
                this.records[i].reject(err);
            }
        }
    }
    rejectUnsettled(err) {
        for (let i = 0; i < this.records.length; i++) {
            if (this.state[i] === RECORD_PENDING) {
                this.state[i] = RECORD_SETTLED;
                this.records[i].reject(err);
            }
        }
    }
}
