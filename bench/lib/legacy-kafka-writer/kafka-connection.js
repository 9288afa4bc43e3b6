// Frozen copy of the home-made Kafka writer as of commit f9588fd (transpiled
// from src/log/kafka-connection.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/kafka-writer.mjs can run the old writer against the one on
// @platformatic/kafka in the same run (issue 12). Not part of streamgate: delete
// this folder once the A/B is recorded.
import { connect as netConnect } from 'node:net';
import { KafkaConnectionError } from './kafka-errors.js';
import { FrameSplitter } from './kafka-frame.js';
/**
 * One TCP connection to one broker. Requests are written as they come
 * (pipelined); Kafka answers them in order on a connection, so the oldest
 * pending request is the one the next response frame must name: a different
 * correlation id means the stream is out of step and the connection is closed.
 *
 * Failure is all-or-nothing: a socket error, a close, a corrupt frame or a
 * request past its deadline destroys the connection and rejects every pending
 * request with a retriable KafkaConnectionError. The owner opens a new one.
 */
export class KafkaConnection {
    socket;
    options;
    pending = [];
    nextId = 1;
    failure = null;
    ending = false;
    splitter = new FrameSplitter((frame) => this.onFrame(frame));
    sweeper;
    closeListeners = [];
    drainWaiters = [];
    closed;
    constructor(socket, options) {
        this.socket = socket;
        this.options = options;
        socket.setNoDelay(true);
        socket.on('data', (chunk) => {
            try {
                this.splitter.push(chunk);
            }
            catch (err) {
                this.destroy(new KafkaConnectionError(`${this.address}: ${err.message}`, { cause: err }));
            }
        });
        socket.on('error', (err) => this.destroy(new KafkaConnectionError(`${this.address}: ${err.message}`, { cause: err })));
        this.closed = new Promise((resolve) => socket.once('close', () => {
            this.destroy(new KafkaConnectionError(`${this.address}: connection closed`));
            resolve();
        }));
        // Responses arrive in order, so only the oldest pending request can be the
        // first to time out: one coarse timer checks it instead of a timer per request.
        this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(1000, options.requestTimeoutMs >> 2)));
        this.sweeper.unref();
    }
    /** Opens a connection; rejects with a KafkaConnectionError after `connectTimeoutMs`. */
    static open(options) {
        return new Promise((resolve, reject) => {
            const socket = netConnect({ host: options.host, port: options.port });
            const fail = (err) => {
                clearTimeout(timer);
                socket.destroy();
                reject(new KafkaConnectionError(`cannot connect to Kafka at ${options.host}:${options.port}: ${err.message}`, { cause: err }));
            };
            const timer = setTimeout(() => fail(new Error(`no connection within ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
            socket.once('error', fail);
            socket.once('connect', () => {
                clearTimeout(timer);
                socket.off('error', fail);
                resolve(new KafkaConnection(socket, options));
            });
        });
    }
    get address() {
        return `${this.options.host}:${this.options.port}`;
    }
    /** False once the connection failed or is closing: use another. */
    get usable() {
        return this.failure === null && !this.ending;
    }
    /** Requests written and not yet answered. */
    get inFlight() {
        return this.pending.length;
    }
    /**
     * Sends one request and resolves with its response body (after the
     * correlation id). `encode` gets the correlation id to put in the header.
     */
    request(encode) {
        if (this.failure)
            return Promise.reject(this.failure);
        if (this.ending)
            return Promise.reject(new KafkaConnectionError(`${this.address}: connection is closing`));
        const correlationId = this.nextId;
        this.nextId = this.nextId === 0x7fffffff ? 1 : this.nextId + 1;
        const frame = encode(correlationId);
        return new Promise((resolve, reject) => {
            this.pending.push({ correlationId, deadline: Date.now() + this.options.requestTimeoutMs, resolve, reject });
            this.socket.write(frame);
        });
    }
    /** Called once when the connection fails or closes, with the reason. */
    onClose(listener) {
        if (this.failure)
            listener(this.failure);
        else
            this.closeListeners.push(listener);
    }
    /** Waits for the pending requests to be answered (or fail), then ends the socket. */
    async close() {
        this.ending = true;
        if (this.pending.length > 0 && !this.failure)
            await new Promise((resolve) => this.drainWaiters.push(resolve));
        this.socket.end();
        await this.closed;
    }
    /** Tears the connection down at once; pending requests reject with `reason`. */
    destroy(reason = new KafkaConnectionError(`${this.address}: connection destroyed`)) {
        if (this.failure)
            return;
        this.failure = reason;
        clearInterval(this.sweeper);
        this.socket.destroy();
        for (const p of this.pending.splice(0))
            p.reject(reason);
        for (const listener of this.closeListeners.splice(0))
            listener(reason);
        for (const drained of this.drainWaiters.splice(0))
            drained();
    }
    onFrame(frame) {
        const correlationId = frame.readInt32BE(0);
        const head = this.pending[0];
        if (!head || head.correlationId !== correlationId) {
            this.destroy(new KafkaConnectionError(`${this.address}: response for correlation id ${correlationId}, expected ${head?.correlationId ?? 'none'}`));
            return;
        }
        this.pending.shift();
        head.resolve(frame.subarray(4));
        if (this.pending.length === 0)
            for (const drained of this.drainWaiters.splice(0))
                drained();
    }
    sweep() {
        const head = this.pending[0];
        if (head && Date.now() > head.deadline) {
            this.destroy(new KafkaConnectionError(`${this.address}: no response within ${this.options.requestTimeoutMs} ms`));
        }
    }
}
