import type { RecordSource } from './kafka-produce-request.js';

/** A record to append, settled once its partition's batch is acknowledged or has failed for good. */
export interface PendingRecord extends RecordSource {
  resolve(): void;
  reject(err: Error): void;
}

const RECORD_PENDING = 0;
const RECORD_SETTLED = 1;

/**
 * One `send` call's records and what is known about each (key size, key hash,
 * settled or not). Every record settles exactly once, whichever path gets there
 * first: its partition's ack, a final error, the retry deadline, or the catch-all
 * for a bug; later calls for a settled record do nothing.
 */
export class SendJob {
  readonly keyBytes: Int32Array;
  /** murmur2(key) & 0x7fffffff, or -1 for a null key. */
  readonly hashes: Int32Array;
  private readonly state: Uint8Array;
  lastError: Error | null = null;

  constructor(readonly records: readonly PendingRecord[]) {
    this.keyBytes = new Int32Array(records.length);
    this.hashes = new Int32Array(records.length);
    this.state = new Uint8Array(records.length);
  }

  resolve(indices: readonly number[]): void {
    for (const i of indices) {
      if (this.state[i] === RECORD_PENDING) {
        this.state[i] = RECORD_SETTLED;
        this.records[i]!.resolve();
      }
    }
  }

  reject(indices: readonly number[], err: Error): void {
    for (const i of indices) {
      if (this.state[i] === RECORD_PENDING) {
        this.state[i] = RECORD_SETTLED;
        this.records[i]!.reject(err);
      }
    }
  }

  rejectUnsettled(err: Error): void {
    for (let i = 0; i < this.records.length; i++) {
      if (this.state[i] === RECORD_PENDING) {
        this.state[i] = RECORD_SETTLED;
        this.records[i]!.reject(err);
      }
    }
  }
}
