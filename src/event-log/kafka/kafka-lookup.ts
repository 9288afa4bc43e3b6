import { randomBytes } from 'node:crypto';
import { Consumer, ListOffsetTimestamps } from '@platformatic/kafka';
import { closeClient, isControlBatch, type FetchResponse } from './kafka-options.js';
import type { Config } from '../../config/schema.js';
import type { FoundRecord } from '../event-log.js';
import { kafkaClientOptions, type KafkaSecurity } from './kafka-options.js';

const READ_UNCOMMITTED = 0;
/** One lookup reads at most this much per round trip. */
const LOOKUP_FETCH_BYTES = 1024 * 1024;

/**
 * Reads single records of the event topic by offset or by time, with plain
 * ListOffsets and Fetch requests to the partition's leader: no consumer group
 * is joined, nothing is committed. For redelivering an event whose delivery is
 * long over (the log holds the only copy of its body) and for showing an event
 * that delivery has not consumed yet.
 */
export class KafkaLookup {
  private readonly consumer: Consumer<Buffer, Buffer, Buffer, Buffer>;
  private readonly topic: string;

  constructor(settings: Readonly<Config['kafka']>, security: KafkaSecurity = {}) {
    this.topic = settings.topic;
    // The group id is never used: no join, no commit, no offset fetch.
    this.consumer = new Consumer({ ...kafkaClientOptions(settings, security, 3), groupId: `streamgate-lookup-${randomBytes(6).toString('hex')}`, isolationLevel: READ_UNCOMMITTED });
  }

  /** The record at `offset` of `partition`; null when retention dropped it or it never existed. */
  async readAt(partition: number, offset: bigint): Promise<Buffer | null> {
    const [low, high] = await this.bounds(partition);
    if (offset < low || offset >= high) return null;
    for (const found of await this.fetchFrom(partition, offset, 256 * 1024)) {
      if (found.offset === offset) return found.value;
      if (found.offset > offset) return null; // compacted away
    }
    return null;
  }

  /**
   * The first record that `match`es among those Kafka stamped from `sinceMs`
   * to `sinceMs + windowMs`, in any partition: each partition is read from the
   * first offset at or after `sinceMs` (ListOffsets by time) until a record is
   * stamped past the window or the partition's end.
   */
  async findSince(sinceMs: number, windowMs: number, match: (value: Buffer) => boolean, timeoutMs = 15_000): Promise<FoundRecord | null> {
    const deadline = Date.now() + timeoutMs;
    const starts = (await this.consumer.listOffsets({ topics: [this.topic], timestamp: BigInt(sinceMs), isolationLevel: READ_UNCOMMITTED })).get(this.topic) ?? [];
    const highs = (await this.consumer.listOffsets({ topics: [this.topic], timestamp: ListOffsetTimestamps.LATEST, isolationLevel: READ_UNCOMMITTED })).get(this.topic) ?? [];
    for (let partition = 0; partition < starts.length; partition++) {
      let at = starts[partition];
      const high = highs[partition];
      // -1: nothing stamped at or after sinceMs in this partition.
      if (at === undefined || high === undefined || at < 0n) continue;
      while (at < high && Date.now() < deadline) {
        const records = await this.fetchFrom(partition, at, LOOKUP_FETCH_BYTES);
        const from = at;
        for (const r of records) {
          if (r.offset < at) continue;
          if (r.value && match(r.value)) return { partition, offset: r.offset, bytes: r.value };
          if (r.timestamp > sinceMs + windowMs) {
            at = high;
            break;
          }
          at = r.offset + 1n;
        }
        if (at === from) break; // nothing new came back
      }
    }
    return null;
  }

  async close(): Promise<void> {
    await closeClient(this.consumer);
  }

  /** [first offset kept, next offset to be written] of `partition`. */
  private async bounds(partition: number): Promise<[bigint, bigint]> {
    const only = { [this.topic]: [partition] };
    const low = (await this.consumer.listOffsets({ topics: [this.topic], partitions: only, timestamp: ListOffsetTimestamps.EARLIEST })).get(this.topic)?.[partition];
    const high = (await this.consumer.listOffsets({ topics: [this.topic], partitions: only, timestamp: ListOffsetTimestamps.LATEST })).get(this.topic)?.[partition];
    return [low ?? 0n, high ?? 0n];
  }

  /** The records one Fetch returns for `partition` from `offset` (whole batches: may start before it). */
  private async fetchFrom(partition: number, offset: bigint, maxBytes: number): Promise<Array<{ offset: bigint; timestamp: number; value: Buffer | null }>> {
    const metadata = await this.consumer.metadata({ topics: [this.topic] });
    const layout = metadata.topics.get(this.topic);
    const leader = layout?.partitions[partition]?.leader;
    if (!layout || leader === undefined || leader < 0) throw new Error(`no leader known for ${this.topic}[${partition}]`);
    const response: FetchResponse = await this.consumer.fetch({
      node: leader,
      topics: [{ topicId: layout.id, partitions: [{ partition, fetchOffset: offset, partitionMaxBytes: maxBytes, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }] }],
      maxWaitTime: 0,
      minBytes: 0,
      maxBytes,
      isolationLevel: READ_UNCOMMITTED,
    });
    const out: Array<{ offset: bigint; timestamp: number; value: Buffer | null }> = [];
    for (const topic of response.responses) {
      for (const part of topic.partitions) {
        if (part.partitionIndex !== partition) continue;
        for (const batch of part.records ?? []) {
          if (isControlBatch(batch)) continue;
          for (const record of batch.records) {
            out.push({ offset: batch.firstOffset + BigInt(record.offsetDelta), timestamp: Number(batch.firstTimestamp + record.timestampDelta), value: record.value });
          }
        }
      }
    }
    return out;
  }
}
