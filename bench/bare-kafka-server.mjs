/**
 * Second baseline: the least a *durable* Node HTTP ingress can do per
 * request. Like bare-server.mjs it reads the whole body, but before answering
 * 202 it appends the event to Kafka (acks=all) with streamgate's own writer,
 * record encoding and batching (dist/event-log/kafka/kafka-writer.js), keyed by the
 * request's partition key. No auth, no header checks, no queue lookup: what
 * remains between this and streamgate is streamgate's own per-request work,
 * while the gap between bare-server.mjs and this is the price of writing to
 * Kafka on the same two cores.
 *
 * argv[2] (lib/bare-http.mjs): `node-http` (default) or `own` (streamgate's
 * server, dist/http/server.js). Started by ingress-modes.mjs with fork(); env
 * KAFKA_BROKERS and BENCH_TOPIC; reports its port over IPC.
 */
import { serveBare } from './lib/bare-http.mjs';
import { loadConfig } from '../dist/config/load-config.js';
import { ensureTopic } from '../dist/event-log/kafka/kafka-topic.js';
import { KafkaWriter } from '../dist/event-log/kafka/kafka-writer.js';
import { createLogger } from '../dist/observability/logger.js';

const config = loadConfig({}, { kafka: { brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), topic: process.env.BENCH_TOPIC } });
// streamgate's writer in dist/, on a topic made as streamgate makes it.
await ensureTopic(config);
const writer = new KafkaWriter(config.kafka, createLogger('warn'));
await writer.connect();

let seq = 0;
function append(partitionKey, body) {
  const id = `evt_bare${++seq}`;
  const record = {
    v: 1, id, tenantPublicId: 'ten_bare', workspaceId: '0', queueId: 'que_bare', queueName: 'bare', receivedAt: Date.now(),
    contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey, path: null, body,
  };
  return writer.append(record).then(() => `{"eventId":"${id}"}`);
}

serveBare(process.argv[2], append).then(
  (port) => process.send?.({ type: 'ready', port }),
  (err) => {
    console.error(`bare-kafka-server: ${err.message}`);
    process.exit(1);
  },
);

process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
