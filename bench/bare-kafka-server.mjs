/**
 * Second baseline: the least a *durable* uWebSockets.js ingress can do per
 * request. Like bare-server.mjs it reads the whole body, but before answering
 * 202 it appends the event to Kafka (acks=all) with streamgate's own writer,
 * record encoding and batching (dist/log/kafka-writer.js), keyed by the
 * request's partition key. No auth, no header checks, no queue lookup, no
 * header guard: what remains between this and streamgate is streamgate's own
 * per-request work, while the gap between bare-server.mjs and this is the
 * price of writing to Kafka on the same two cores.
 *
 * Started by ingress-modes.mjs with fork(); env KAFKA_BROKERS and
 * BENCH_TOPIC; argv[2] puts it behind a relay (lib/listen-bare.mjs); reports
 * its port over IPC.
 */
import uWS from 'uWebSockets.js';
import { listenBare } from './lib/listen-bare.mjs';
import { loadConfig } from '../dist/config/load-config.js';
import { ensureTopic } from '../dist/log/kafka-topic.js';
import { KafkaWriter } from '../dist/log/kafka-writer.js';
import { createLogger } from '../dist/observability/logger.js';

const config = loadConfig({}, { kafka: { brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), topic: process.env.BENCH_TOPIC } });
// streamgate's writer in dist/, on a topic made as streamgate makes it.
await ensureTopic(config);
const writer = new KafkaWriter(config.kafka, createLogger('warn'));
await writer.connect();

let seq = 0;
const app = uWS.App();
app.post('/*', (res, req) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const partitionKey = req.getHeader('x-service-partition-key') || null;
  const chunks = [];
  res.onData((chunk, isLast) => {
    const copy = Buffer.allocUnsafe(chunk.byteLength);
    copy.set(new Uint8Array(chunk));
    chunks.push(copy);
    if (!isLast) return;
    const id = `evt_bare${++seq}`;
    const record = {
      v: 1, id, tenantPublicId: 'ten_bare', workspaceId: '0', queueId: 'que_bare', queueName: 'bare', receivedAt: Date.now(),
      contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey, path: null,
      body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
    };
    writer.append(record).then(
      () => {
        if (aborted) return;
        res.cork(() => res.writeStatus('202 Accepted').writeHeader('content-type', 'application/json').end(`{"eventId":"${id}"}`));
      },
      () => {
        if (aborted) return;
        res.cork(() => res.writeStatus('503 Service Unavailable').end());
      },
    );
  });
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

// argv[2]: none (default), guard, legacy or pipe: see lib/listen-bare.mjs.
listenBare(app, process.argv[2]).then(
  (port) => process.send?.({ type: 'ready', port }),
  (err) => {
    console.error(`bare-kafka-server: ${err.message}`);
    process.exit(1);
  },
);

process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
