import type { Consumer, Kafka } from 'kafkajs';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { EventLogReader, LogEntry, PartitionHandler } from './event-log.js';
import { decodeEvent } from './event-record.js';

/**
 * Consumes the event topic as one member of the cluster's consumer group.
 *
 * kafkajs keeps two positions per partition: where it fetches next (the
 * "resolved" offset) and what is committed. We resolve as soon as a batch is
 * handed to the partition's actor, so fetching moves on, but commit only what
 * the actor reports finished. After a crash the group resumes from the
 * committed offset and replays what was in flight: at least once, never lost.
 */
export class KafkaReader implements EventLogReader {
  private readonly consumer: Consumer;
  private readonly handlers = new Map<number, PartitionHandler>();
  private handlerFor: ((partition: number) => PartitionHandler) | null = null;

  constructor(
    kafka: Kafka,
    private readonly settings: Readonly<Config['kafka']>,
    private readonly partitionsConcurrently: number,
    private readonly log: Logger,
  ) {
    this.consumer = kafka.consumer({
      groupId: settings.groupId,
      sessionTimeout: settings.sessionTimeoutMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
      rebalanceTimeout: Math.max(settings.sessionTimeoutMs * 2, 20_000),
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
    this.consumer.on(this.consumer.events.GROUP_JOIN, (event) => {
      const assigned = new Set(event.payload.memberAssignment[this.settings.topic] ?? []);
      this.log.info({ partitions: [...assigned].sort((a, b) => a - b) }, 'partitions assigned');
      for (const [partition, handler] of this.handlers) {
        if (!assigned.has(partition)) {
          handler.revoke();
          this.handlers.delete(partition);
        }
      }
    });
  }

  async start(handlerFor: (partition: number) => PartitionHandler): Promise<void> {
    this.handlerFor = handlerFor;
    await this.consumer.connect();
    // A new group starts at the beginning: events accepted before any delivery
    // node ever ran must still be delivered.
    await this.consumer.subscribe({ topic: this.settings.topic, fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.partitionsConcurrently,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        if (!isRunning() || isStale() || batch.messages.length === 0) return;
        const handler = this.handler(batch.partition);
        const entries: LogEntry[] = batch.messages.map((m) => {
          const entry: LogEntry = { partition: batch.partition, offset: BigInt(m.offset), record: null };
          try {
            if (!m.value) throw new Error('empty message');
            entry.record = decodeEvent(m.value);
          } catch (err) {
            entry.decodeError = (err as Error).message;
          }
          return entry;
        });
        await handler.deliver(entries, heartbeat);
        resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
      },
    });
  }

  private handler(partition: number): PartitionHandler {
    let handler = this.handlers.get(partition);
    if (!handler) {
      handler = this.handlerFor!(partition);
      this.handlers.set(partition, handler);
    }
    return handler;
  }

  async commit(partition: number, nextOffset: bigint): Promise<void> {
    await this.consumer.commitOffsets([{ topic: this.settings.topic, partition, offset: nextOffset.toString() }]);
  }

  pause(): void {
    this.consumer.pause([{ topic: this.settings.topic }]);
  }

  async stop(): Promise<void> {
    // Revoke first: a batch held back by backpressure lets go, so stop() does not wait on it.
    for (const handler of this.handlers.values()) handler.revoke();
    this.handlers.clear();
    await this.consumer.stop();
    await this.consumer.disconnect();
  }
}
