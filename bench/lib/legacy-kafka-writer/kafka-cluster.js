// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-cluster.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
import { decodeApiVersionsResponse, encodeApiVersionsRequest } from './kafka-api-versions.js';
import { KafkaConnection } from './kafka-connection.js';
import { KafkaConnectionError, KafkaProtocolError } from './kafka-errors.js';
import { decodeMetadataResponse, encodeMetadataRequest, METADATA_API_KEY, METADATA_VERSION } from './kafka-metadata.js';
import { PRODUCE_API_KEY, PRODUCE_VERSION } from './kafka-produce-request.js';
/**
 * The connection gives up on a request this much after the broker's own
 * timeout_ms, so the broker's REQUEST_TIMED_OUT answer normally arrives first.
 */
const CLIENT_TIMEOUT_MARGIN_MS = 2000;
/**
 * The producer's view of the cluster for one topic: a connection per broker
 * address (opened on first use, opened again after it failed) and the topic's
 * layout from Metadata v4, refreshed on demand with concurrent refreshes
 * sharing one request. Bootstrap addresses are used until the cluster names
 * its brokers, and again if none of those answers.
 */
export class KafkaCluster {
    settings;
    clientId;
    log;
    /** The topic's layout, or null until known (or while the topic is missing or leaderless). */
    layout = null;
    /** Why `layout` is null (the topic's metadata error), for the final rejection. */
    layoutError = null;
    knownBrokers = [];
    connections = new Map();
    open = new Set();
    refreshing = null;
    versionsChecked = false;
    constructor(settings, 
    /** The client id, UTF-8, as every request header carries it. */
    clientId, log) {
        this.settings = settings;
        this.clientId = clientId;
        this.log = log;
    }
    /** The connection to `address`, opened on first use and again after it failed. */
    connection(address) {
        const existing = this.connections.get(address);
        if (existing)
            return existing;
        const colon = address.lastIndexOf(':');
        const opening = KafkaConnection.open({
            host: address.slice(0, colon),
            port: Number(address.slice(colon + 1)),
            connectTimeoutMs: this.settings.producer.connectTimeoutMs,
            requestTimeoutMs: this.settings.producer.requestTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
        });
        this.connections.set(address, opening);
        const forget = () => {
            if (this.connections.get(address) === opening)
                this.connections.delete(address);
        };
        opening.then((conn) => {
            this.open.add(conn);
            conn.onClose((err) => {
                this.open.delete(conn);
                forget();
                // Brokers close idle connections now and then: not worth a warning.
                // Failures that cost requests are logged by the producer's retries.
                this.log.debug({ broker: address, err: err.message }, 'Kafka connection closed');
            });
        }, forget);
        return opening;
    }
    /** Loads the topic's metadata; concurrent callers share one request. */
    refreshMetadata() {
        this.refreshing ??= this.loadMetadata().finally(() => {
            this.refreshing = null;
        });
        return this.refreshing;
    }
    /**
     * Fails, with a clear message, against a broker that cannot serve the
     * versions the producer speaks (asked once, of the first bootstrap broker
     * that answers).
     */
    async checkVersions() {
        if (this.versionsChecked)
            return;
        let lastError = new KafkaConnectionError('no Kafka brokers configured (kafka.brokers)');
        for (const address of this.settings.brokers) {
            let body;
            try {
                const conn = await this.connection(address);
                body = await conn.request((id) => encodeApiVersionsRequest(id, this.clientId));
            }
            catch (err) {
                lastError = err;
                continue;
            }
            const { errorCode, apis } = decodeApiVersionsResponse(body);
            if (errorCode !== 0)
                throw new KafkaProtocolError(errorCode, `answering ApiVersions at ${address}`);
            const needed = [[PRODUCE_API_KEY, PRODUCE_VERSION, 'Produce'], [METADATA_API_KEY, METADATA_VERSION, 'Metadata']];
            for (const [apiKey, version, name] of needed) {
                const range = apis.find((a) => a.apiKey === apiKey);
                if (!range || version < range.minVersion || version > range.maxVersion) {
                    const served = range ? `v${range.minVersion}–v${range.maxVersion}` : 'none';
                    throw new Error(`the Kafka broker at ${address} does not serve ${name} v${version} (it serves ${served}); streamgate's producer needs it`);
                }
            }
            this.versionsChecked = true;
            return;
        }
        throw lastError;
    }
    /** Destroys every open socket at once (test hook: a broker crash or a network cut). */
    destroySockets() {
        for (const conn of this.open)
            conn.destroy(new KafkaConnectionError(`${conn.address}: destroyed by __destroySockets()`));
    }
    /** Closes every connection once its pending requests are answered. */
    async close() {
        const connections = [...this.connections.values()];
        this.connections.clear();
        await Promise.all(connections.map((c) => c.then((conn) => conn.close(), () => undefined)));
    }
    async loadMetadata() {
        const candidates = [...new Set([...this.knownBrokers, ...this.settings.brokers])];
        let lastError = new KafkaConnectionError('no Kafka brokers configured (kafka.brokers)');
        for (const address of candidates) {
            try {
                const conn = await this.connection(address);
                const body = await conn.request((id) => encodeMetadataRequest(id, this.clientId, [this.settings.topic]));
                this.applyMetadata(decodeMetadataResponse(body));
                return;
            }
            catch (err) {
                lastError = err;
            }
        }
        throw lastError;
    }
    applyMetadata(meta) {
        const addresses = new Map(meta.brokers.map((b) => [b.nodeId, `${b.host}:${b.port}`]));
        this.knownBrokers = [...addresses.values()];
        const topic = meta.topics.find((t) => t.name === this.settings.topic);
        if (!topic || topic.errorCode !== 0 || topic.partitions.length === 0) {
            // Retriable as a whole (UNKNOWN_TOPIC_OR_PARTITION while it is created,
            // LEADER_NOT_AVAILABLE just after): sends wait and retry.
            this.layout = null;
            this.layoutError = new KafkaProtocolError(topic?.errorCode || 3, `for topic ${this.settings.topic} in metadata`);
            return;
        }
        const n = topic.partitions.length;
        const leaders = new Array(n).fill(null);
        for (const p of topic.partitions) {
            if (p.partition >= 0 && p.partition < n && p.leader >= 0)
                leaders[p.partition] = addresses.get(p.leader) ?? null;
        }
        const available = [];
        for (let p = 0; p < n; p++)
            if (leaders[p] !== null)
                available.push(p);
        this.layout = { partitions: n, leaders, available, loadedAt: Date.now() };
        this.layoutError = null;
    }
}
