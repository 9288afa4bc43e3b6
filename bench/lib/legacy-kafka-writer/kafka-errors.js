// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-errors.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
/**
 * The Kafka error codes the producer meets, with the flag that drives what it
 * does: `retriable` codes mean "the cluster is moving" (a leader changed, a
 * replica is catching up, the topic is still being created), so the records are
 * sent again after a metadata refresh; every other code rejects at once, since
 * sending the same bytes again cannot succeed. Decisions read the flag, never
 * the message.
 */
const CODES = new Map([
    [-1, { type: 'UNKNOWN_SERVER_ERROR', retriable: false }],
    [2, { type: 'CORRUPT_MESSAGE', retriable: false }],
    [3, { type: 'UNKNOWN_TOPIC_OR_PARTITION', retriable: true }],
    [5, { type: 'LEADER_NOT_AVAILABLE', retriable: true }],
    [6, { type: 'NOT_LEADER_OR_FOLLOWER', retriable: true }],
    [7, { type: 'REQUEST_TIMED_OUT', retriable: true }],
    [10, { type: 'MESSAGE_TOO_LARGE', retriable: false }],
    [13, { type: 'NETWORK_EXCEPTION', retriable: true }],
    [17, { type: 'INVALID_TOPIC_EXCEPTION', retriable: false }],
    [18, { type: 'RECORD_LIST_TOO_LARGE', retriable: false }],
    [19, { type: 'NOT_ENOUGH_REPLICAS', retriable: true }],
    [20, { type: 'NOT_ENOUGH_REPLICAS_AFTER_APPEND', retriable: true }],
    [21, { type: 'INVALID_REQUIRED_ACKS', retriable: false }],
    [29, { type: 'TOPIC_AUTHORIZATION_FAILED', retriable: false }],
    [31, { type: 'CLUSTER_AUTHORIZATION_FAILED', retriable: false }],
    [32, { type: 'INVALID_TIMESTAMP', retriable: false }],
    [35, { type: 'UNSUPPORTED_VERSION', retriable: false }],
    [42, { type: 'INVALID_REQUEST', retriable: false }],
    [43, { type: 'UNSUPPORTED_FOR_MESSAGE_FORMAT', retriable: false }],
    [56, { type: 'KAFKA_STORAGE_ERROR', retriable: true }],
    [87, { type: 'INVALID_RECORD', retriable: false }],
]);
/** The name Kafka gives an error code (`KAFKA_ERROR_<n>` for codes not listed). */
export function kafkaErrorType(code) {
    return CODES.get(code)?.type ?? `KAFKA_ERROR_${code}`;
}
/** An error code a broker answered with. */
export class KafkaProtocolError extends Error {
    code;
    type;
    retriable;
    constructor(code, context) {
        const known = CODES.get(code);
        const type = known?.type ?? `KAFKA_ERROR_${code}`;
        super(`Kafka error ${type} (${code}) ${context}`);
        this.code = code;
        this.name = 'KafkaProtocolError';
        this.type = type;
        this.retriable = known?.retriable ?? false;
    }
}
/**
 * The connection failed, closed or timed out with requests outstanding. Always
 * retriable: whether the broker appended a batch whose answer was lost is
 * unknown, so it is sent again (at-least-once).
 */
export class KafkaConnectionError extends Error {
    retriable = true;
    constructor(message, options) {
        super(message, options);
        this.name = 'KafkaConnectionError';
    }
}
/** True when sending the same records again may succeed. */
export function isRetriable(err) {
    return typeof err === 'object' && err !== null && err.retriable === true;
}
