import { setTimeout as sleep } from 'node:timers/promises';
import { compatibilityPartitioner, ProduceAcks, Producer, type MessageToProduce } from '@platformatic/kafka';
import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { EventLogWriter } from './event-log.js';
import { encodeEvent, type EventRecord } from './event-record.js';
import { isRetriableKafkaError, kafkaErrorIds, kafkaErrorText, walk } from './kafka-failure.js';
import { closeClient, KAFKA_BACKOFF, kafkaClientOptions, type KafkaSecurity } from './kafka-options.js';
import { backoffDelay } from '../util/backoff.js';
import { brokerErrorChannel, produceChannel, type BrokerErrorMessage, type ProduceMessage } from '../observability/channels.js';

/** An appended record waiting for its flush. */
interface Waiting {
  /** When append() was called: the record's retryMs runs from here, waiting included. */
  at: number;
  key: Buffer | undefined;
  value: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Sends the library retries itself before ours: the same request with the
 * same producer id and sequence numbers, so the broker drops a copy it already
 * stored. Once the library gives up it forgets its producer id (2.x), and our
 * resends go under a new one.
 */
const LIBRARY_RETRIES = 3;

/**
 * Appends events to Kafka through @platformatic/kafka's idempotent producer
 * (acks=all, producer id + per-partition sequence numbers): many HTTP requests
 * share one flush, one Produce request per leader broker, and each request's
 * promise settles when its flush is acknowledged. A flush takes every record
 * waiting, up to `maxBatch` records and `maxBatchBytes`, at the end of the
 * event-loop turn (or `lingerMs` after the first); while it is in flight the
 * next records wait and form the next, larger flush.
 *
 * One flush at a time is what keeps a key's records in order. The library
 * (2.x) reserves a partition's sequence numbers when send() builds the request
 * and drops its producer id and every count when a send fails; a second flush
 * in flight for the same partition would carry the next numbers, be refused
 * out of order when the first failed, and be stored, under the new producer
 * id, before the first one's resend.
 *
 * A flush whose answer is lost (connection cut, timeout) is sent again as it
 * was by the library (same numbers: the broker keeps the first copy and
 * acknowledges the repeat), then by us until kafka.producer.retryMs. Ours go
 * under a new producer id, which the library takes itself after a failed
 * send: a record the broker stored from a request whose every answer was lost
 * can then be stored twice (at least once; delivery is at-least-once anyway).
 * When the broker answered for some partitions and refused others, only the
 * refused records go again.
 *
 * Records are keyed by partition key and placed as Kafka's Java client would
 * (murmur2, the library's compatibility partitioner).
 */
export class KafkaWriter implements EventLogWriter {
  private readonly producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  private readonly options: Readonly<Config['kafka']['producer']>;
  private readonly topic: string;
  private readonly log: Logger;
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private sending: Promise<void> | null = null;
  private closed = false;
  /** Since when no broker answered any of our sends (refused, reset, timed out); null once one does. */
  private unreachableSince: number | null = null;
  private roundRobin = Math.floor(Math.random() * 0x7fffffff);

  constructor(settings: Readonly<Config['kafka']>, log: Logger, security: KafkaSecurity = {}) {
    this.options = settings.producer;
    this.topic = settings.topic;
    this.log = log.child({ component: 'kafka-writer', topic: settings.topic });
    this.producer = new Producer({
      ...kafkaClientOptions(settings, security, LIBRARY_RETRIES),
      idempotent: true,
      acks: ProduceAcks.ALL,
      // Keyed: the Java client's murmur2. Without a key: round-robin (the library's
      // compatibility partitioner would put every such record in partition 0).
      partitioner: (message, key) => (key ? compatibilityPartitioner(message, key) : (this.roundRobin = (this.roundRobin + 1) & 0x7fffffff)),
      // Retried on a metadata refresh by the library when a leader moved.
      repeatOnStaleMetadata: true,
    });
    // The library's own resends (same request, same sequence numbers), for whoever debugs a slow append.
    (this.producer as unknown as NodeJS.EventEmitter).on('client:performWithRetry:retry', (operation: string, attempt: number) =>
      this.log.debug({ operation, attempt: attempt + 1 }, 'Kafka request failed; the client is retrying it'),
    );
  }

  /**
   * Takes a producer id and loads the topic's metadata, retrying unreachable
   * brokers until retryMs: a node started with its broker waits for it.
   */
  async connect(): Promise<void> {
    const deadline = Date.now() + this.options.retryMs;
    for (let failures = 0; ; failures++) {
      try {
        await this.producer.initIdempotentProducer({});
        await this.producer.metadata({ topics: [this.topic] });
        return;
      } catch (err) {
        if (!isRetriableKafkaError(err) || Date.now() >= deadline) throw err;
      }
      await sleep(Math.min(backoffDelay(failures, KAFKA_BACKOFF), Math.max(0, deadline - Date.now())));
    }
  }

  append(record: EventRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.closed) {
        reject(new Error('the Kafka writer is closed'));
        return;
      }
      const key = record.partitionKey === null ? undefined : Buffer.from(record.partitionKey);
      this.waiting.push({ at: Date.now(), key, value: encodeEvent(record), resolve, reject });
      if (this.sending) return; // the flush in flight takes the next batch when it ends
      if (this.waiting.length >= this.options.maxBatch) this.flush();
      else if (this.options.lingerMs === 0) this.immediate ??= setImmediate(this.flushNow);
      else this.timer ??= setTimeout(this.flushNow, this.options.lingerMs);
    });
  }

  /**
   * Test hook: destroys every socket the producer has open, as a broker crash
   * or a network cut would. What was in flight is sent again.
   */
  __destroySockets(): void {
    for (const [, connection] of this.producer.connections) connection.socket?.destroy();
  }

  private readonly flushNow = (): void => this.flush();

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.immediate) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    if (this.sending || this.waiting.length === 0) return;
    const batch = this.takeBatch();
    this.sending = this.send(batch)
      // A bug must not leave a request hanging: whatever is unsettled fails.
      .catch((err: unknown) => {
        for (const r of batch) r.reject(err instanceof Error ? err : new Error(String(err)));
      })
      .finally(() => {
        this.sending = null;
        this.flush();
      });
  }

  /** The next flush: up to maxBatch records and maxBatchBytes of values (always at least one record). */
  private takeBatch(): Waiting[] {
    const { maxBatch, maxBatchBytes } = this.options;
    let n = 0;
    let bytes = 0;
    while (n < this.waiting.length && n < maxBatch) {
      bytes += this.waiting[n]!.value.length;
      if (n > 0 && bytes > maxBatchBytes) break;
      n++;
    }
    const batch = n === this.waiting.length ? this.waiting : this.waiting.slice(0, n);
    this.waiting = batch === this.waiting ? [] : this.waiting.slice(n);
    return batch;
  }

  /** Sends `batch` until every record is settled; never rejects. */
  private async send(batch: Waiting[]): Promise<void> {
    // The oldest record's deadline: records that queued behind a flush that was
    // retrying have spent part of their time already (else a request could wait
    // twice retryMs for its 503).
    const deadline = batch[0]!.at + this.options.retryMs;
    let todo = batch;
    for (let attempt = 1; ; attempt++) {
      let failure: unknown;
      try {
        // After a failed send the library has dropped its producer id: send() takes a new one first.
        await this.producer.send({ messages: todo.map((r): MessageToProduce<Buffer, Buffer, Buffer, Buffer> => ({ topic: this.topic, key: r.key, value: r.value })) });
        this.unreachableSince = null;
        for (const r of todo) r.resolve();
        if (produceChannel.hasSubscribers) produceChannel.publish({ records: batch.length, attempts: attempt, ok: true } satisfies ProduceMessage);
        return;
      } catch (err) {
        failure = err;
      }
      // A protocol error is an answer: some broker is there. Only silence counts as unreachable.
      if (kafkaErrorIds(failure).length > 0) this.unreachableSince = null;
      else this.unreachableSince ??= Date.now();
      const { accepted, refused } = this.splitByAnswer(todo, failure);
      for (const r of accepted) r.resolve();
      todo = refused;
      if (todo.length === 0) {
        if (produceChannel.hasSubscribers) produceChannel.publish({ records: batch.length, attempts: attempt, ok: true } satisfies ProduceMessage);
        return;
      }
      const text = kafkaErrorText(failure);
      const unreachable = this.unreachableFor();
      const givingUp = !isRetriableKafkaError(failure) || Date.now() >= deadline || unreachable !== null;
      if (brokerErrorChannel.hasSubscribers) brokerErrorChannel.publish({ operation: 'produce', errorCodes: kafkaErrorIds(failure), retrying: !givingUp } satisfies BrokerErrorMessage);
      if (givingUp) {
        const why = !isRetriableKafkaError(failure)
          ? ''
          : unreachable !== null
            ? ` (no broker has answered for ${unreachable} ms)`
            : ` within kafka.producer.retryMs (${this.options.retryMs} ms)`;
        const err = new Error(`Kafka did not acknowledge ${todo.length} record(s) for topic ${this.topic}${why}: ${text}`, { cause: failure });
        this.log.error({ records: todo.length, attempts: attempt, err, reason: text }, 'Kafka produce failed for good');
        for (const r of todo) r.reject(err);
        if (produceChannel.hasSubscribers) produceChannel.publish({ records: batch.length, attempts: attempt, ok: false } satisfies ProduceMessage);
        return;
      }
      const backoffMs = backoffDelay(attempt - 1, KAFKA_BACKOFF);
      this.log[attempt === 1 ? 'warn' : 'debug']({ records: todo.length, attempt, backoffMs, err: text }, 'Kafka produce failed; retrying');
      await sleep(Math.min(backoffMs, Math.max(0, deadline - Date.now())));
    }
  }

  /** How long no broker has answered, once that is kafka.producer.unreachableMs or more; else null. */
  private unreachableFor(): number | null {
    if (this.unreachableSince === null || this.options.unreachableMs === 0) return null;
    const silent = Date.now() - this.unreachableSince;
    return silent >= this.options.unreachableMs ? silent : null;
  }

  /**
   * Which records of a failed send the broker nevertheless took: a Produce
   * answer with per-partition errors says so partition by partition. Without
   * such an answer (connection lost, timeout) nothing is known to be taken.
   */
  private splitByAnswer(todo: Waiting[], failure: unknown): { accepted: Waiting[]; refused: Waiting[] } {
    const failed = failedPartitions(failure, this.topic);
    if (failed === null) return { accepted: [], refused: todo };
    const layout = this.producer.currentMetadata?.topics.get(this.topic);
    if (!layout) return { accepted: [], refused: todo };
    const placed = todo.map((r) => (r.key === undefined ? -1 : compatibilityPartitioner(undefined as never, r.key) % layout.partitionsCount));
    // Records without a key went round-robin, and a send to several brokers
    // may have lost one answer while another broker refused: then what was
    // taken is not known, and everything goes again (the broker drops repeats
    // of what it took from a request whose answer was lost).
    const leaders = new Set(placed.map((p) => layout.partitions[p]?.leader));
    if (placed.includes(-1) || leaders.size !== 1) return { accepted: [], refused: todo };
    const accepted: Waiting[] = [];
    const refused: Waiting[] = [];
    todo.forEach((r, i) => (failed.has(placed[i]!) ? refused : accepted).push(r));
    return { accepted, refused };
  }

  /** Flushes what waits, lets the flush in flight finish, then closes the producer. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.waiting.length > 0 || this.sending) {
      this.flush();
      await this.sending;
    }
    await closeClient(this.producer);
  }
}

/**
 * The partitions a Produce answer refused, from the last ResponseError in the
 * failure; null when no broker answered the request (then every partition's
 * fate is unknown).
 */
function failedPartitions(failure: unknown, topic: string): Set<number> | null {
  let response: ProduceAnswer | null = null;
  // The last attempt's answer wins: walk() visits attempts in the order they failed.
  for (const node of walk(failure)) {
    const carried = (node as { response?: unknown }).response;
    if (node.code === 'PLT_KFK_RESPONSE' && carried && typeof carried === 'object') response = carried as ProduceAnswer;
  }
  const answer: ProduceAnswer | null = response;
  if (!answer || !Array.isArray(answer.responses)) return null;
  const failed = new Set<number>();
  let seen = false;
  for (const t of answer.responses) {
    if (t.name !== topic) continue;
    for (const p of t.partitionResponses ?? []) {
      seen = true;
      if (p.errorCode !== 0) failed.add(p.index);
    }
  }
  return seen ? failed : null;
}

interface ProduceAnswer {
  responses?: Array<{ name: string; partitionResponses?: Array<{ index: number; errorCode: number }> }>;
}
