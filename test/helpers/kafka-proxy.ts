import type { Socket } from 'node:net';
import type { Test } from 'tap';
import { KAFKA_BROKERS } from './backends.js';
import { TcpProxy } from './tcp-proxy.js';

/**
 * A TcpProxy in front of a PLAINTEXT Kafka broker that a node keeps using
 * after bootstrap. A broker tells its clients where to connect next (the
 * Metadata and FindCoordinator answers carry its advertised host and port),
 * so a plain proxy would only carry the first request: this one rewrites the
 * advertised port in those two answers to its own, so every connection of
 * the node (producer, consumer group, admin) goes through it and a cut
 * severs them all. The port is 4 bytes either way: no frame changes length.
 *
 *   request frame:  int32 size | int16 apiKey | int16 apiVersion | int32 correlationId | ...
 *   response frame: int32 size | int32 correlationId | ...
 */
const METADATA = 3;
const FIND_COORDINATOR = 10;

export async function startKafkaProxy(t: Test, broker = KAFKA_BROKERS.split(',')[0]!): Promise<TcpProxy> {
  const at = broker.lastIndexOf(':');
  const host = Buffer.from(broker.slice(0, at));
  const port = Number(broker.slice(at + 1));
  return TcpProxy.start(t, broker, (client, upstream, proxyPort) => relayKafka(client, upstream, host, port, proxyPort));
}

function relayKafka(client: Socket, upstream: Socket, host: Buffer, port: number, proxyPort: number): void {
  const apiKeys = new Map<number, number>();
  const advertised = Buffer.alloc(host.length + 4);
  host.copy(advertised);
  advertised.writeInt32BE(port, host.length);

  // Requests go through as they come; only each frame's header is read.
  let header: Buffer = Buffer.alloc(0);
  let skip = 0;
  client.on('data', (chunk: Buffer) => {
    upstream.write(chunk);
    let rest = chunk;
    while (rest.length > 0) {
      if (skip > 0) {
        const n = Math.min(skip, rest.length);
        skip -= n;
        rest = rest.subarray(n);
        continue;
      }
      const need = 12 - header.length;
      header = Buffer.concat([header, rest.subarray(0, need)]);
      rest = rest.subarray(Math.min(need, rest.length));
      if (header.length < 12) break;
      apiKeys.set(header.readInt32BE(8), header.readInt16BE(4));
      skip = header.readInt32BE(0) - 8;
      header = Buffer.alloc(0);
    }
  });

  // Answers are forwarded frame by frame, the two that name brokers rewritten.
  let pending: Buffer = Buffer.alloc(0);
  upstream.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const size = pending.readInt32BE(0);
      if (pending.length < 4 + size) break;
      const frame = Buffer.from(pending.subarray(0, 4 + size));
      pending = pending.subarray(4 + size);
      const correlationId = frame.readInt32BE(4);
      const apiKey = apiKeys.get(correlationId);
      apiKeys.delete(correlationId);
      if (apiKey === METADATA || apiKey === FIND_COORDINATOR) {
        for (let i = frame.indexOf(advertised, 8); i >= 0; i = frame.indexOf(advertised, i + advertised.length)) {
          frame.writeInt32BE(proxyPort, i + host.length);
        }
      }
      client.write(frame);
    }
  });
}
