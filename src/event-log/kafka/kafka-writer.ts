import { ProduceAcks, Producer, type MessageToProduce } from '@platformatic/kafka';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../observability/logger.js';
import type { EventLogWriter } from '../event-log.js';
import { encodeEvent, type EventRecord } from '../event-record.js';
import { partitionHash, partitionOf } from '../murmur2.js';
import { isRetriableKafkaError, kafkaErrorIds, kafkaErrorText, walk } from './kafka-failure.js';
import { closeClient, KAFKA_BACKOFF, kafkaClientOptions, type KafkaSecurity } from './kafka-options.js';
import { backoffDelay } from '../../util/backoff.js';
import { brokerErrorChannel, produceChannel, type BrokerErrorMessage, type ProduceMessage } from '../../observability/channels.js';

/** An appended record waiting for its flush. */
interface Waiting {
  /** When append() was called: the record's retryMs runs from here, waiting included. */
  at: number;
  key: Buffer | undefined;
  value: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Why the writer stopped a library call before it ended by itself. */
type Ending =
  | { kind: 'deadline' }
  | { kind: 'unreachable'; silentMs: number }
  /** An error no retry can fix (authentication, TLS, a refused request): the library would retry some of them. */
  | { kind: 'fatal'; error: unknown };

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown } | { ok: false; ending: Ending };

type KafkaProducer = Producer<Buffer, Buffer, Buffer, Buffer>;

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
 * A flush whose answer is lost (connection cut, timeout, leader moving) is
 * sent again by the library, as it was: same producer id, same numbers, so
 * the broker keeps the first copy and acknowledges the repeat. The library
 * retries without limit; the writer ends it: at the oldest record's
 * kafka.producer.retryMs, at the first failure once no broker has answered for
 * kafka.producer.unreachableMs, or at an error no retry fixes. Ending it means
 * closing that producer (its pending retries stop, so nothing of the flush is
 * sent afterwards) and taking a fresh one for the next flush. Records are thus
 * stored once across any cut shorter than the writer's patience; only a
 * request whose every answer was lost and that the writer then gave up on
 * (503) may still have been stored.
 *
 * When a broker answered for some partitions and refused others, only the
 * refused records fail (or go again when the refusal is retriable).
 *
 * Records are keyed by partition key and placed as Kafka's Java client would
 * (murmur2, the library's compatibility partitioner).
 */
export class KafkaWriter implements EventLogWriter {
  private producer: KafkaProducer;
  private readonly settings: Readonly<Config['kafka']>;
  private readonly security: KafkaSecurity;
  private readonly options: Readonly<Config['kafka']['producer']>;
  private readonly topic: string;
  private readonly log: Logger;
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private sending: Promise<void> | null = null;
  private closed = false;
  /** Since when no broker answered any of our requests (refused, reset or timed out); null once one does. */
  private unreachableSince: number | null = null;
  /** The last failure the library retried: what a deadline's message names. */
  private lastFailure: unknown = null;
  /** Ends the library call in progress (run()); null when none is. */
  private interrupt: ((ending: Ending) => void) | null = null;
  /** Whether the call in progress ends at the first failure once brokers are unreachable. */
  private failFast = false;
  /** Producers given up on, still closing. */
  private readonly retiring = new Set<Promise<void>>();
  private roundRobin = Math.floor(Math.random() * 0x7fffffff);

  constructor(settings: Readonly<Config['kafka']>, log: Logger, security: KafkaSecurity = {}) {
    this.settings = settings;
    this.security = security;
    this.options = settings.producer;
    this.topic = settings.topic;
    this.log = log.child({ component: 'kafka-writer', topic: settings.topic });
    this.producer = this.newProducer();
  }

  private newProducer(): KafkaProducer {
    const producer: KafkaProducer = new Producer({
      ...kafkaClientOptions(this.settings, this.security, 0),
      // Until the writer ends the call: each retry is the same request (same numbers).
      retries: true,
      retryDelay: (client: object, operation: string, attempt: number, _retries: number, error: Error) => {
        if (client === this.producer) this.noteFailure(error, operation, attempt);
        return backoffDelay(attempt - 1, KAFKA_BACKOFF);
      },
      idempotent: true,
      acks: ProduceAcks.ALL,
      // Keyed: the Java client's murmur2 (ours: the library's allocates in BigInt). Without a
      // key: round-robin (the library's compatibility partitioner would put every such record in
      // partition 0). The library takes the result modulo the partition count.
      partitioner: (_message, key) => (key ? partitionHash(key) : (this.roundRobin = (this.roundRobin + 1) & 0x7fffffff)),
      // Retried on a metadata refresh by the library when a leader moved.
      repeatOnStaleMetadata: true,
    });
    return producer;
  }

  /** A failed attempt of the library call in progress: decides whether the writer ends it. */
  private noteFailure(error: Error, operation: string, attempt: number): void {
    this.lastFailure = error;
    // A protocol error is an answer: some broker is there. Only silence counts as unreachable.
    if (kafkaErrorIds(error).length > 0) this.unreachableSince = null;
    else this.unreachableSince ??= Date.now();
    if (brokerErrorChannel.hasSubscribers) brokerErrorChannel.publish({ operation: 'produce', errorCodes: kafkaErrorIds(error), retrying: true } satisfies BrokerErrorMessage);
    this.log[attempt === 1 ? 'warn' : 'debug']({ operation, attempt, err: kafkaErrorText(error) }, 'Kafka request failed; the client is retrying it');
    if (!isRetriableKafkaError(error)) {
      this.interrupt?.({ kind: 'fatal', error });
      return;
    }
    const silentMs = this.unreachableFor();
    if (silentMs !== null && this.failFast) this.interrupt?.({ kind: 'unreachable', silentMs });
  }

  /**
   * Runs one library call on the current producer until it settles, or until
   * the writer ends it (deadline, brokers unreachable, an error no retry
   * fixes): then that producer is closed, which stops its retries, and a fresh
   * one takes its place.
   */
  private async run<T>(call: (producer: KafkaProducer) => Promise<T>, deadline: number, failFast: boolean): Promise<Outcome<T>> {
    const producer = this.producer;
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<Ending>((resolve) => {
      this.interrupt = resolve;
      timer = setTimeout(() => resolve({ kind: 'deadline' }), Math.max(0, deadline - Date.now()));
    });
    this.failFast = failFast;
    // Already silent: the first failure ends it (noteFailure), as for every call after the first.
    const settled = call(producer).then(
      (value): Outcome<T> => ({ ok: true, value }),
      (error: unknown): Outcome<T> => ({ ok: false, error }),
    );
    try {
      const outcome = await Promise.race([settled, ended.then((ending): Outcome<T> => ({ ok: false, ending }))]);
      if ('ending' in outcome) this.retire(producer);
      return outcome;
    } finally {
      clearTimeout(timer);
      this.interrupt = null;
    }
  }

  /** Closes a producer the writer gave up on (its retries stop) and takes a fresh one. */
  private retire(producer: KafkaProducer): void {
    if (this.producer === producer) this.producer = this.newProducer();
    const closing = closeClient(producer, true).finally(() => this.retiring.delete(closing));
    this.retiring.add(closing);
  }

  /**
   * Takes a producer id and loads the topic's metadata, retrying unreachable
   * brokers until retryMs: a node started with its broker waits for it.
   */
  async connect(): Promise<void> {
    const outcome = await this.run(async (producer) => {
      await producer.initIdempotentProducer({});
      await producer.metadata({ topics: [this.topic] });
    }, Date.now() + this.options.retryMs, false);
    if (outcome.ok) {
      this.unreachableSince = null;
      return;
    }
    if ('error' in outcome) throw outcome.error;
    throw outcome.ending.kind === 'fatal' ? outcome.ending.error : (this.lastFailure ?? new Error(`no answer from Kafka within kafka.producer.retryMs (${this.options.retryMs} ms)`));
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
      const messages = todo.map((r): MessageToProduce<Buffer, Buffer, Buffer, Buffer> => ({ topic: this.topic, key: r.key, value: r.value }));
      const outcome = await this.run((producer) => producer.send({ messages }), deadline, true);
      if (outcome.ok) {
        this.unreachableSince = null;
        for (const r of todo) r.resolve();
        if (produceChannel.hasSubscribers) produceChannel.publish({ records: batch.length, attempts: attempt, ok: true } satisfies ProduceMessage);
        return;
      }
      let failure: unknown;
      let why: string;
      if ('ending' in outcome) {
        const ending = outcome.ending;
        failure = ending.kind === 'fatal' ? ending.error : this.lastFailure;
        why = ending.kind === 'deadline'
          ? ` within kafka.producer.retryMs (${this.options.retryMs} ms)`
          : ending.kind === 'unreachable' ? ` (no broker has answered for ${ending.silentMs} ms)` : '';
      } else {
        // The library stopped by itself: an answer it does not retry, or a
        // retriable one after it took a new producer id (then we go again).
        failure = outcome.error;
        if (kafkaErrorIds(failure).length > 0) this.unreachableSince = null;
        const { accepted, refused } = this.splitByAnswer(todo, failure);
        for (const r of accepted) r.resolve();
        todo = refused;
        if (todo.length === 0) {
          if (produceChannel.hasSubscribers) produceChannel.publish({ records: batch.length, attempts: attempt, ok: true } satisfies ProduceMessage);
          return;
        }
        if (isRetriableKafkaError(failure) && Date.now() < deadline) continue;
        why = isRetriableKafkaError(failure) ? ` within kafka.producer.retryMs (${this.options.retryMs} ms)` : '';
      }
      const text = failure === null ? 'no answer' : kafkaErrorText(failure);
      if (brokerErrorChannel.hasSubscribers) brokerErrorChannel.publish({ operation: 'produce', errorCodes: kafkaErrorIds(failure), retrying: false } satisfies BrokerErrorMessage);
      const err = new Error(`Kafka did not acknowledge ${todo.length} record(s) for topic ${this.topic}${why}: ${text}`, { cause: failure });
      this.log.error({ records: todo.length, attempts: attempt, err, reason: text }, 'Kafka produce failed for good');
      for (const r of todo) r.reject(err);
      if (produceChannel.hasSubscribers) produceChannel.publish({ records: batch.length, attempts: attempt, ok: false } satisfies ProduceMessage);
      return;
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
    const placed = todo.map((r) => (r.key === undefined ? -1 : partitionOf(r.key, layout.partitionsCount)));
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
    await Promise.all(this.retiring);
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
