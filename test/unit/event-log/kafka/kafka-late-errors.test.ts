import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';

/**
 * src/event-log/kafka/kafka-late-errors.ts works around a crash of @platformatic/kafka: a
 * connection whose SASL exchange is under way when the broker resets it emits
 * a second 'error' after its listeners are gone, and the process dies of an
 * uncaught exception. The child (test/helpers/kafka-hangup-client.ts) meets
 * such a broker on loopback, with and without the workaround.
 */
const CHILD = fileURLToPath(new URL('../../../helpers/kafka-hangup-client.ts', import.meta.url));
// The package exports only its entry point: its package.json is read from beside dist/.
const LIBRARY = (JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('@platformatic/kafka')), 'utf8')) as { version: string }).version;

function run(...args: string[]): { status: number | null; out: Record<string, unknown> } {
  // execArgv carries tap's TypeScript loader.
  const child = spawnSync(process.execPath, [...process.execArgv, CHILD, ...args], { encoding: 'utf8', timeout: 30_000 });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  let out: Record<string, unknown> = {};
  try {
    out = JSON.parse(line) as Record<string, unknown>;
  } catch {
    out = { unreadable: child.stdout + child.stderr };
  }
  return { status: child.status, out };
}

t.test('with the workaround, a broker hanging up mid-authentication fails the caller and the process lives on', async (t) => {
  const { status, out } = run('guard');
  t.equal(status, 0, JSON.stringify(out));
  t.equal(out.alive, true);
  t.match(out.caller, /Cannot connect to any broker/);
});

t.test('without it, the library still crashes (the day this fails, kafka-late-errors.ts can go)', async (t) => {
  const { status, out } = run();
  t.comment(`@platformatic/kafka ${LIBRARY}: ${JSON.stringify(out)}`);
  t.equal(status, 70, 'uncaught exception: the workaround is still needed');
  t.match(out.uncaught, /PLT_KFK_NETWORK: Connection to 127\.0\.0\.1:\d+ failed\./);
});
