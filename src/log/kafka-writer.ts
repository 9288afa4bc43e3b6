import { CompressionTypes, Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import type { Config } from '../config/schema.js';
import type { EventLogWriter } from './event-log.js';
import { encodeEvent, type EventRecord } from './event-record.js';

interface Waiting {
  message: Message;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Appends events to Kafka in batches: many HTTP requests share one produce
 * call (acks=all), and each request's promise settles with its batch. A batch
 * flushes when `maxBatch` records wait or `lingerMs` after the first arrived;
 * at most `maxInFlight` produce calls run at once, so under load batches grow
 * instead of calls piling up.
 *
 * Records are keyed by partition key and placed by kafkajs's default
 * partitioner, which is Java-compatible murmur2: the same key lands on the
 * same partition as any Java client would put it.
 */
export class KafkaWriter implements EventLogWriter {
  private readonly producer: Producer;
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private inFlight = 0;
  private readonly settled = new Set<Promise<void>>();

  constructor(
    kafka: Kafka,
    private readonly settings: Readonly<Config['kafka']>,
  ) {
    this.producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
  }

  async connect(): Promise<void> {
    await this.producer.connect();
  }

  append(record: EventRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ message: { key: record.partitionKey, value: encodeEvent(record) }, resolve, reject });
      if (this.waiting.length >= this.settings.producer.maxBatch) this.flush();
      else if (this.settings.producer.lingerMs === 0) this.immediate ??= setImmediate(this.flushNow);
      else this.timer ??= setTimeout(this.flushNow, this.settings.producer.lingerMs);
    });
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
    while (this.waiting.length > 0 && this.inFlight < this.settings.producer.maxInFlight) {
      const batch = this.waiting.splice(0, this.settings.producer.maxBatch);
      this.inFlight++;
      const done = this.producer
        // No compression: the CPU is the scarce resource on an ingress node, and
        // event bodies on a local network are cheaper to send than to squeeze.
        .send({ topic: this.settings.topic, acks: -1, compression: CompressionTypes.None, messages: batch.map((w) => w.message) })
        .then(
          () => batch.forEach((w) => w.resolve()),
          (err: Error) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          this.settled.delete(done);
          if (this.waiting.length > 0) this.flush();
        });
      this.settled.add(done);
    }
  }

  /** Flushes what waits, lets in-flight batches finish, then disconnects. */
  async close(): Promise<void> {
    while (this.waiting.length > 0 || this.settled.size > 0) {
      this.flush();
      await Promise.allSettled([...this.settled]);
    }
    await this.producer.disconnect();
  }
}
