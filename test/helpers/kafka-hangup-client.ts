import { createServer } from 'node:net';
import { Admin } from '@platformatic/kafka';
import { guardLateConnectionErrors } from '../../src/event-log/kafka/kafka-late-errors.js';

/**
 * Child process of test/unit/event-log/kafka/kafka-late-errors.test.ts: a SASL client
 * against a "broker" on loopback that reads the client's first request and
 * answers with a TCP reset (a broker hanging up mid-authentication). With
 * `guard` as argument the workaround is installed first. Prints one JSON line:
 * what the caller got, and whether the process was still alive afterwards.
 * An uncaught exception ends it with code 70 and its message on stdout.
 */
process.on('uncaughtException', (err: Error & { code?: string }) => {
  console.log(JSON.stringify({ uncaught: `${err.code ?? err.name}: ${err.message}`, cause: (err.cause as Error | undefined)?.message ?? null }));
  process.exit(70);
});

if (process.argv.includes('guard')) guardLateConnectionErrors();

const server = createServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };
const admin = new Admin({
  clientId: 'late-errors',
  bootstrapBrokers: [`127.0.0.1:${port}`],
  sasl: { mechanism: 'SCRAM-SHA-256', username: 'u', password: 'p' },
  retries: 0,
  connectTimeout: 3_000,
  requestTimeout: 5_000,
  timeout: 5_000,
});
let caller = 'resolved';
try {
  await admin.metadata({ topics: [] });
} catch (err) {
  caller = (err as Error).message;
}
await admin.close().catch(() => {});
// The late 'error' comes within a few event-loop turns of the reset; wait well past them.
await new Promise((resolve) => setTimeout(resolve, 500));
server.close();
console.log(JSON.stringify({ caller, alive: true }));
