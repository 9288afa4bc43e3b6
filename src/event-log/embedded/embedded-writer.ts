import type { EventLogWriter } from '../event-log.js';
import { encodeEvent, type EventRecord } from '../event-record.js';
import type { EmbeddedStore } from './embedded-store.js';
import { partitionOf } from '../murmur2.js';
import { produceChannel } from '../../observability/channels.js';

/**
 * Appends to the embedded log. The partition is murmur2(partition key) as on
 * Kafka; records without a key go round-robin. The offset is reserved
 * synchronously, so appends to one partition keep their call order, and the
 * promise resolves once lmdb's batched transaction holding it is on disk.
 */
export class EmbeddedWriter implements EventLogWriter {
  private roundRobin = 0;
  private closed = false;

  private readonly store: EmbeddedStore;
  constructor(store: EmbeddedStore) {
    this.store = store;
  }

  async append(record: EventRecord): Promise<void> {
    if (this.closed) throw new Error('the embedded log writer is closed');
    const partitions = this.store.partitions;
    const partition = record.partitionKey !== null
      ? partitionOf(record.partitionKey, partitions)
      : (this.roundRobin = (this.roundRobin + 1) % partitions);
    const offset = this.store.nextOffset(partition);
    try {
      await this.store.events.put([partition, offset], encodeEvent(record));
    } catch (err) {
      if (produceChannel.hasSubscribers) produceChannel.publish({ records: 1, attempts: 1, ok: false });
      throw err;
    }
    // lmdb batches puts into transactions on its own: to metrics each append is a batch of one.
    if (produceChannel.hasSubscribers) produceChannel.publish({ records: 1, attempts: 1, ok: true });
    this.store.appended(partition);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.store.release();
  }
}
