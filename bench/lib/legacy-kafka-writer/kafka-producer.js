// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-producer.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaCluster } from './kafka-cluster.js';
import { isRetriable, KafkaConnectionError, KafkaProtocolError } from './kafka-errors.js';
import { decodeProduceResponse, encodeProduceRequest, RECORD_BATCH_OVERHEAD, recordSize, } from './kafka-produce-request.js';
import { SendJob } from './kafka-send-job.js';
import { murmur2 } from './murmur2.js';
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1000;
/** Metadata older than this is refreshed in the background (partitions added, leaders moved quietly). */
const METADATA_MAX_AGE_MS = 300_000;
/**
 * The write path to Kafka: encodes one Produce request per leader broker
 * straight into one Buffer (kafka-produce-request.ts) and sends it on its own
 * connection (kafka-connection.ts), acks=all. kafkajs still serves admin, the
 * consumer and single-record fetches; this replaces only its producer, whose
 * encoding (growing Encoder buffers, Long arithmetic, copies) cost about a
 * third of an ingress node's CPU.
 *
 *   send(records) ─► partition (murmur2(key) as Java; round-robin without key)
 *                 ─► group by leader broker ─► split at maxBatchBytes per partition
 *                 ─► one request per broker (more when split) ─► settle each record
 *                     with its partition's answer; retriable failures: refresh
 *                     metadata, back off 100 ms → 1 s, send those records again
 *                     until kafka.producer.retryMs has passed
 *
 * Delivery is at-least-once, as kafkajs without idempotence: a request whose
 * answer is lost (connection dropped, timed out) may have been appended, and
 * its records are sent again, so the topic can hold duplicates. Consumers
 * already tolerate repeats (delivery is at-least-once end to end). A retry can
 * also land after a later batch of the same partition did, so per-key order
 * holds except across a retried failure, as with kafkajs before.
 */
export class KafkaProducer {
    settings;
    topicName;
    options;
    log;
    cluster;
    sends = new Set();
    closed = false;
    roundRobin = Math.floor(Math.random() * 0x7fffffff);
    /** Reused for keys: hashing and sizing a key costs no allocation. */
    scratch = Buffer.allocUnsafe(1024);
    constructor(settings, log) {
        this.settings = settings;
        this.topicName = Buffer.from(settings.topic);
        this.options = settings.producer;
        this.log = log.child({ component: 'kafka-producer', topic: settings.topic });
        this.cluster = new KafkaCluster(settings, Buffer.from(settings.clientId), this.log);
    }
    /**
     * Checks that a broker speaks Produce v3 and Metadata v4 and loads the
     * topic's metadata, retrying unreachable brokers until retryMs. A topic
     * that does not exist yet does not fail this: sends wait for it (until
     * their own deadline).
     */
    async connect() {
        const deadline = Date.now() + this.options.retryMs;
        let backoff = FIRST_BACKOFF_MS;
        for (;;) {
            try {
                await this.cluster.checkVersions();
                await this.cluster.refreshMetadata();
                return;
            }
            catch (err) {
                if (!isRetriable(err) || Date.now() >= deadline)
                    throw err;
            }
            await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
            backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
    }
    /**
     * Appends `records` (in this order per partition) and settles each one's
     * resolve/reject. The returned promise resolves once every record is
     * settled; it never rejects.
     */
    send(records) {
        const job = new SendJob(records);
        if (this.closed) {
            job.rejectUnsettled(new Error('the Kafka producer is closed'));
            return Promise.resolve();
        }
        const done = this.deliver(job)
            // A bug must not leave a request hanging: whatever is unsettled fails.
            .catch((err) => job.rejectUnsettled(err instanceof Error ? err : new Error(String(err))))
            .finally(() => this.sends.delete(done));
        this.sends.add(done);
        return done;
    }
    /** Waits for every send to settle, then closes the connections. */
    async close() {
        this.closed = true;
        while (this.sends.size > 0)
            await Promise.allSettled([...this.sends]);
        await this.cluster.close();
    }
    /**
     * Test hook: destroys every open socket at once, as a broker crash or a
     * network cut would. Outstanding requests fail as connection losses and are
     * retried on new connections.
     */
    __destroySockets() {
        this.cluster.destroySockets();
    }
    async deliver(job) {
        const deadline = Date.now() + this.options.retryMs;
        let todo = this.prepare(job);
        let backoff = FIRST_BACKOFF_MS;
        for (let attempt = 1;; attempt++) {
            const layout = this.cluster.layout;
            if (layout) {
                if (Date.now() - layout.loadedAt > METADATA_MAX_AGE_MS)
                    this.cluster.refreshMetadata().catch(() => { });
                todo = await this.attempt(layout, job, todo);
            }
            else {
                job.lastError = this.cluster.layoutError ?? new KafkaProtocolError(3, `for topic ${this.settings.topic}: no metadata yet`);
            }
            if (todo.length === 0)
                return;
            const reason = job.lastError ?? new Error('unknown failure');
            const remaining = deadline - Date.now();
            if (remaining <= 0) {
                const err = new Error(`Kafka did not acknowledge ${todo.length} record(s) for topic ${this.settings.topic} within kafka.producer.retryMs (${this.options.retryMs} ms): ${reason.message}`, { cause: reason });
                this.log.error({ records: todo.length, attempts: attempt, err: reason.message }, 'Kafka produce failed for good');
                job.reject(todo, err);
                return;
            }
            const level = attempt === 1 ? 'warn' : 'debug';
            this.log[level]({ records: todo.length, attempt, backoffMs: backoff, err: reason.message }, 'Kafka produce failed; retrying after a metadata refresh');
            // The last wait ends at the deadline: one more attempt there, then give up.
            await sleep(Math.min(backoff, remaining));
            backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
            try {
                await this.cluster.refreshMetadata();
            }
            catch (err) {
                job.lastError = err instanceof Error ? err : new Error(String(err));
            }
            // Retried records go out in their original order again.
            todo.sort((a, b) => a - b);
        }
    }
    /**
     * Sizes and hashes every key once; returns every record's index. A record
     * over maxBatchBytes is not refused here: it travels in a batch of its own
     * and the broker, which knows the topic's max.message.bytes, decides
     * (MESSAGE_TOO_LARGE fails that record alone).
     */
    prepare(job) {
        const { records, keyBytes, hashes } = job;
        const todo = [];
        for (let i = 0; i < records.length; i++) {
            const { key } = records[i];
            if (key === null) {
                keyBytes[i] = -1;
                hashes[i] = -1;
            }
            else {
                // UTF-8 is at most 3 bytes per UTF-16 unit.
                if (key.length * 3 > this.scratch.length)
                    this.scratch = Buffer.allocUnsafe(key.length * 3);
                const n = this.scratch.write(key, 0, 'utf8');
                keyBytes[i] = n;
                hashes[i] = murmur2(this.scratch, n) & 0x7fffffff;
            }
            todo.push(i);
        }
        return todo;
    }
    /** One round: every record in `todo` sent once. Returns the ones to retry. */
    async attempt(layout, job, todo) {
        const retry = [];
        const byPartition = new Map();
        for (const i of todo) {
            const hash = job.hashes[i];
            let partition;
            if (hash >= 0)
                partition = hash % layout.partitions;
            else {
                this.roundRobin = (this.roundRobin + 1) & 0x7fffffff;
                partition = layout.available.length > 0 ? layout.available[this.roundRobin % layout.available.length] : this.roundRobin % layout.partitions;
            }
            let list = byPartition.get(partition);
            if (!list)
                byPartition.set(partition, (list = []));
            list.push(i);
        }
        const byBroker = new Map();
        for (const [partition, indices] of byPartition) {
            const leader = layout.leaders[partition] ?? null;
            if (leader === null) {
                for (const i of indices)
                    retry.push(i);
                job.lastError = new KafkaProtocolError(5, `for ${this.settings.topic}[${partition}] (no leader in metadata)`);
                continue;
            }
            let list = byBroker.get(leader);
            if (!list)
                byBroker.set(leader, (list = []));
            list.push({ partition, indices });
        }
        await Promise.all([...byBroker].map(([address, batches]) => this.produceTo(address, batches, job, retry)));
        return retry;
    }
    /** Sends the batches led by one broker: one request, or several when a partition's records exceed maxBatchBytes. */
    async produceTo(address, batches, job, retry) {
        const requests = this.split(batches, job);
        let conn;
        try {
            conn = await this.cluster.connection(address);
        }
        catch (err) {
            this.retryOrReject(requests.flat(), job, retry, err);
            return;
        }
        const timestamp = Date.now();
        await Promise.all(requests.map(async (request) => {
            let body;
            try {
                body = await conn.request((correlationId) => encodeProduceRequest({
                    correlationId,
                    clientId: this.cluster.clientId,
                    topic: this.topicName,
                    acks: -1,
                    timeoutMs: this.options.requestTimeoutMs,
                    timestamp,
                    records: job.records,
                    keyBytes: job.keyBytes,
                    batches: request,
                }));
            }
            catch (err) {
                this.retryOrReject(request, job, retry, err);
                return;
            }
            let response;
            try {
                response = decodeProduceResponse(body);
            }
            catch (err) {
                // The frame was whole but its body is not a Produce v3 answer: the
                // stream cannot be trusted any more.
                const lost = new KafkaConnectionError(`${address}: undecodable produce response: ${err.message}`, { cause: err });
                conn.destroy(lost);
                this.retryOrReject(request, job, retry, lost);
                return;
            }
            this.settleFromResponse(address, response, request, job, retry);
        }));
    }
    settleFromResponse(address, response, request, job, retry) {
        const results = new Map();
        for (const topic of response.topics) {
            if (topic.name !== this.settings.topic)
                continue;
            for (const p of topic.partitions)
                results.set(p.partition, p.errorCode);
        }
        for (const batch of request) {
            const code = results.get(batch.partition);
            if (code === 0)
                job.resolve(batch.indices);
            else if (code === undefined) {
                this.retryOrReject([batch], job, retry, new KafkaConnectionError(`${address}: produce response has no result for ${this.settings.topic}[${batch.partition}]`));
            }
            else {
                this.retryOrReject([batch], job, retry, new KafkaProtocolError(code, `from ${address} for ${this.settings.topic}[${batch.partition}]`));
            }
        }
    }
    retryOrReject(batches, job, retry, reason) {
        const err = reason instanceof Error ? reason : new Error(String(reason));
        if (isRetriable(err)) {
            job.lastError = err;
            for (const b of batches)
                for (const i of b.indices)
                    retry.push(i);
        }
        else {
            for (const b of batches)
                job.reject(b.indices, err);
        }
    }
    /**
     * Cuts each partition's records into batches of at most maxBatchBytes;
     * request r carries the r-th batch of every partition (the broker takes one
     * batch per partition per request). Usually a single request.
     */
    split(batches, job) {
        const limit = this.options.maxBatchBytes;
        const requests = [[]];
        for (const batch of batches) {
            const { partition, indices } = batch;
            let start = 0;
            let bytes = RECORD_BATCH_OVERHEAD;
            let r = 0;
            for (let j = 0; j < indices.length; j++) {
                const i = indices[j];
                const size = recordSize(job.keyBytes[i], job.records[i].value.length, j - start);
                if (j > start && bytes + size > limit) {
                    (requests[r++] ??= []).push({ partition, indices: indices.slice(start, j) });
                    start = j;
                    bytes = RECORD_BATCH_OVERHEAD + recordSize(job.keyBytes[i], job.records[i].value.length, 0);
                }
                else {
                    bytes += size;
                }
            }
            (requests[r] ??= []).push(start === 0 ? batch : { partition, indices: indices.slice(start) });
        }
        return requests;
    }
}
