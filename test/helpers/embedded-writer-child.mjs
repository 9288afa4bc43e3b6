// Appends events to an embedded log as fast as it can and prints each one's
// sequence number once append() resolved (the moment ingress would answer 202).
// The parent kills it with SIGKILL mid-stream. Runs the built dist/.
import { embeddedStore } from '../../dist/event-log/embedded/embedded-store.js';
import { EmbeddedWriter } from '../../dist/event-log/embedded/embedded-writer.js';

const [dir, partitions] = process.argv.slice(2);
const writer = new EmbeddedWriter(embeddedStore(dir, Number(partitions)));
let seq = 0;
const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
async function loop() {
  for (;;) {
    const batch = [];
    for (let i = 0; i < 50; i++) {
      const n = seq++;
      const record = {
        v: 1, id: `evt_${n}`, tenantPublicId: 'ten_x', workspaceId: '1', queueId: '1', queueName: 'q',
        receivedAt: Date.now(), contentType: null, idempotencyKey: null, eventType: null, groupKey: null,
        partitionKey: keys[n % keys.length], path: null, body: Buffer.from(String(n)),
      };
      batch.push(writer.append(record).then(() => process.stdout.write(`${n}\n`)));
    }
    await Promise.all(batch);
  }
}
loop();
