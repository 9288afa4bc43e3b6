import type { Config } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { EventLogWriter } from './event-log.js';
import { encodeEvent, type EventRecord } from './event-record.js';
import { KafkaProducer, type PendingRecord } from './kafka-producer.js';

/** An appended record waiting for its flush; the producer settles it. */
type Waiting = PendingRecord;

/**
 * Appends events to Kafka in batches: many HTTP requests share one flush
 * (acks=all), and each request's promise settles when its own partition's batch
 * is acknowledged. A batch flushes when `maxBatch` records wait or `lingerMs`
 * after the first arrived; at most `maxInFlight` flushes run at once, so under
 * load batches grow instead of calls piling up.
 *
 * Records are keyed by partition key and placed as Kafka's Java client would
 * (murmur2, see KafkaProducer): the same key lands on the same partition as
 * any Java client would put it.
 */
export class KafkaWriter implements EventLogWriter {
  private readonly producer: KafkaProducer;
  private readonly producerSettings: Readonly<Config['kafka']['producer']>;
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private inFlight = 0;
  private readonly settled = new Set<Promise<void>>();

  constructor(settings: Readonly<Config['kafka']>, log: Logger) {
    this.producerSettings = settings.producer;
    this.producer = new KafkaProducer(settings, log);
  }

  async connect(): Promise<void> {
    await this.producer.connect();
  }

  append(record: EventRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ key: record.partitionKey, value: encodeEvent(record), resolve, reject });
      if (this.waiting.length >= this.producerSettings.maxBatch) this.flush();
      else if (this.producerSettings.lingerMs === 0) this.immediate ??= setImmediate(this.flushNow);
      else this.timer ??= setTimeout(this.flushNow, this.producerSettings.lingerMs);
    });
  }

  /** Test hook: see KafkaProducer.__destroySockets. */
  __destroySockets(): void {
    this.producer.__destroySockets();
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
    while (this.waiting.length > 0 && this.inFlight < this.producerSettings.maxInFlight) {
      const batch = this.waiting.length <= this.producerSettings.maxBatch ? this.waiting : this.waiting.slice(0, this.producerSettings.maxBatch);
      this.waiting = batch === this.waiting ? [] : this.waiting.slice(batch.length);
      this.inFlight++;
      // send() settles every record itself and never rejects.
      const done = this.producer.send(batch).finally(() => {
        this.inFlight--;
        this.settled.delete(done);
        if (this.waiting.length > 0) this.flush();
      });
      this.settled.add(done);
    }
  }

  /** Flushes what waits, lets in-flight batches finish, then closes the producer. */
  async close(): Promise<void> {
    while (this.waiting.length > 0 || this.settled.size > 0) {
      this.flush();
      await Promise.allSettled([...this.settled]);
    }
    await this.producer.close();
  }
}
