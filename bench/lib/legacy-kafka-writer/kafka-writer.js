// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-writer.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
import { encodeEvent } from './event-record.js';
import { KafkaProducer } from './kafka-producer.js';
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
export class KafkaWriter {
    producer;
    producerSettings;
    waiting = [];
    timer = null;
    immediate = null;
    inFlight = 0;
    settled = new Set();
    constructor(settings, log) {
        this.producerSettings = settings.producer;
        this.producer = new KafkaProducer(settings, log);
    }
    async connect() {
        await this.producer.connect();
    }
    append(record) {
        return new Promise((resolve, reject) => {
            this.waiting.push({ key: record.partitionKey, value: encodeEvent(record), resolve, reject });
            if (this.waiting.length >= this.producerSettings.maxBatch)
                this.flush();
            else if (this.producerSettings.lingerMs === 0)
                this.immediate ??= setImmediate(this.flushNow);
            else
                this.timer ??= setTimeout(this.flushNow, this.producerSettings.lingerMs);
        });
    }
    /** Test hook: see KafkaProducer.__destroySockets. */
    __destroySockets() {
        this.producer.__destroySockets();
    }
    flushNow = () => this.flush();
    flush() {
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
                if (this.waiting.length > 0)
                    this.flush();
            });
            this.settled.add(done);
        }
    }
    /** Flushes what waits, lets in-flight batches finish, then closes the producer. */
    async close() {
        while (this.waiting.length > 0 || this.settled.size > 0) {
            this.flush();
            await Promise.allSettled([...this.settled]);
        }
        await this.producer.close();
    }
}
