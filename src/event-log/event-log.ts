import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { EventRecord } from './event-record.js';

/**
 * The event log port. Ingress appends; delivery consumes partitions in order
 * and commits how far it has finished. Kafka is the adapter today; the actors
 * and everything above them only see this interface.
 */
export interface EventLogWriter {
  /** Resolves once the record is durable (acks from all in-sync replicas). */
  append(record: EventRecord): Promise<void>;
  close(): Promise<void>;
}

/** A record found by a search of the log: where it is and its bytes. */
export interface FoundRecord {
  partition: number;
  offset: bigint;
  bytes: Buffer;
}

/** One record handed to a partition's consumer. */
export interface LogEntry {
  partition: number;
  offset: bigint;
  record: EventRecord | null;
  /** Set when the bytes could not be decoded; the entry is skipped and logged. */
  decodeError?: string;
}

export interface PartitionHandler {
  /**
   * Takes the partition's next entries in order. May wait (backpressure); the
   * log fetches no further entries for this partition until it resolves.
   */
  deliver(entries: LogEntry[], keepAlive: () => Promise<void>): Promise<void>;
  /** The partition was taken away (rebalance or stop): drop in-memory work. */
  revoke(): void;
}

/** A reader's place in its consumer group, for readiness (/readyz). */
export interface GroupMembership {
  /** A member now: joined, and its last heartbeat answered. */
  joined: boolean;
  /** Partitions this member owns now (0 is fine: more members than partitions). */
  partitions: number;
  /** Why it is not a member (the last group error), when not joined. */
  error?: string;
}

/** Where this consumer stands in one partition it owns (for the lag gauge). */
export interface PartitionLag {
  partition: number;
  /** Records written but not yet committed by the group: end of the log − committed offset (≥ 0). */
  lag: bigint;
}

export interface EventLogReader {
  /** The partitions this member owns now, with their lag (as of the last fetch on Kafka). */
  lag(): PartitionLag[];
  start(handlerFor: (partition: number) => PartitionHandler): Promise<void>;
  /**
   * Records where this consumer group resumes, for several partitions at once
   * (one request to the log, not one per partition): [partition, nextOffset].
   * Partitions this reader no longer owns are left out.
   */
  commit(points: ReadonlyArray<readonly [partition: number, nextOffset: bigint]>): Promise<void>;
  /** Stops fetching new entries (drain); commits still work. */
  pause(): void;
  stop(): Promise<void>;
  /** Whether this reader is a member of its group now. */
  membership(): GroupMembership;
}

/** The event log a node writes to and reads from, whichever adapter runs. */
export interface EventLogBackend {
  kind: 'kafka' | 'embedded';
  openWriter(): Promise<EventLogWriter>;
  openReader(log: Logger): EventLogReader;
  /**
   * The record bytes at one offset, for redelivering an event whose delivery
   * is long over (the log holds the only copy of its body); null once
   * retention dropped it.
   */
  readAt(partition: number, offset: bigint): Promise<Buffer | null>;
  /**
   * The first record that `match`es among those written from `sinceMs` to
   * `sinceMs + windowMs` (any partition), or null: for showing an event that
   * delivery has not consumed yet.
   */
  findSince(sinceMs: number, windowMs: number, match: (value: Buffer) => boolean): Promise<FoundRecord | null>;
  /**
   * Gets the log ready to write and read (Kafka: the topic exists and every
   * partition has a leader). Throws KafkaUnavailableError; whether waiting
   * can help is isRetriableKafkaError's call on it.
   */
  prepare(): Promise<void>;
  /** Readiness: asks the broker for the topic's metadata (Kafka); absent for the embedded log. */
  probe?(): Promise<Record<string, unknown>>;
  /** Closes what the backend keeps open for lookups. */
  close(): Promise<void>;
}

/** retention.hours in ms: how long the event log keeps a record (the Kafka topic's retention.ms, the embedded log's sweep). */
export function retentionMs(config: Readonly<Pick<Config, 'retention'>>): number {
  return Math.round(config.retention.hours * 3_600_000);
}
