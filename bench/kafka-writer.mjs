import { Kafka, logLevel } from 'kafkajs';
import { KafkaWriter } from '../dist/log/kafka-writer.js';
import { createLogger } from '../dist/observability/logger.js';
const kafka = new Kafka({ clientId: 'kw', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });
const topic = 'sg-kw-' + Date.now();
const admin = kafka.admin(); await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 12, replicationFactor: 1 }], waitForLeaders: true });
const linger = Number(process.argv[2] ?? 2), conns = Number(process.argv[3] ?? 50), inflight = Number(process.argv[4] ?? 4);
const w = new KafkaWriter(
  { brokers: ['127.0.0.1:9092'], clientId: 'kw', topic, producer: { lingerMs: linger, maxBatch: 2000, maxInFlight: inflight, retryMs: 30000, requestTimeoutMs: 30000, connectTimeoutMs: 5000, maxBatchBytes: 900000 } },
  createLogger('warn'),
);
await w.connect();
const body = Buffer.alloc(1024, 'x');
let n = 0; const lat = [];
const rec = (i) => ({ v: 1, id: 'evt_' + i, tenantPublicId: 'ten_x', workspaceId: '1', queueId: '1', queueName: 'q', receivedAt: Date.now(), contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: 'k' + (i % 1000), path: null, body });
const until = Date.now() + 5000;
const cpu0 = process.cpuUsage();
await Promise.all(Array.from({ length: conns }, async () => { while (Date.now() < until) { const t0 = performance.now(); await w.append(rec(n++)); lat.push(performance.now() - t0); } }));
const cpu = process.cpuUsage(cpu0);
lat.sort((a, b) => a - b);
console.log(`linger ${linger} conns ${conns} inflight ${inflight}: ${Math.round(n / 5)} ev/s, ${((cpu.user + cpu.system) / n).toFixed(1)} µs CPU per event, p50 ${lat[lat.length >> 1].toFixed(2)} p99 ${lat[Math.floor(lat.length * 0.99)].toFixed(2)} cpu ${Math.round((cpu.user + cpu.system) / 50000)}%`);
await w.close(); await admin.deleteTopics({ topics: [topic] }); await admin.disconnect();
