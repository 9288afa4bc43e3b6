import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * A node loads the OpenTelemetry SDK only when tracing is on, and undici only
 * at its first https: delivery: ~5 MB of live heap each that every full
 * collection of a node without them would otherwise walk (issue 27,
 * bench/results/e2e-profile.md).
 */
const CHILD = fileURLToPath(new URL('../../helpers/loaded-packages-child.ts', import.meta.url));

function run(mode: string): { loaded: string[]; tracing: boolean; answer: { kind?: string; code?: string } | null } {
  // execArgv carries the TypeScript loader.
  const child = spawnSync(process.execPath, [...process.execArgv, CHILD, mode], { encoding: 'utf8', timeout: 60_000 });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as never;
  } catch {
    throw new Error(`child ${mode} printed no result: ${child.stdout}${child.stderr}`);
  }
}

const SDK = ['@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources'];

t.test('a node without tracing that has sent nothing over TLS loads neither the OpenTelemetry SDK nor undici', async (t) => {
  const { loaded, tracing } = run('idle');
  t.equal(tracing, false);
  t.ok(loaded.includes('@platformatic/kafka') && loaded.includes('postgres'), `the node's own packages were seen loading (${loaded.length})`);
  for (const name of [...SDK, 'undici']) t.notOk(loaded.includes(name), `${name} not loaded`);
});

t.test('the first https: delivery loads undici and is answered', async (t) => {
  const { loaded, answer } = run('https');
  t.ok(loaded.includes('undici'), 'undici loaded');
  t.equal(answer?.kind, 'error', 'nothing listens there: a connection error, not a crash');
  t.equal(answer?.code, 'ECONNREFUSED');
  for (const name of SDK) t.notOk(loaded.includes(name), `${name} still not loaded`);
});

t.test('tracing on loads the SDK (an injected exporter: not the OTLP one)', async (t) => {
  const { loaded, tracing } = run('tracing');
  t.equal(tracing, true);
  t.ok(loaded.includes('@opentelemetry/sdk-trace') && loaded.includes('@opentelemetry/resources'), 'SDK loaded');
  t.notOk(loaded.includes('@opentelemetry/exporter-trace-otlp-http'), 'the OTLP exporter only when it is the one used');
  t.notOk(loaded.includes('undici'), 'undici still not loaded');
});
