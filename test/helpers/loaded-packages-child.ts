/**
 * Child of test/unit/node/optional-modules.test.ts: records every package this
 * process loads, imports the node (as `streamgate start` does), then does what
 * argv[2] says and prints the packages loaded, as one JSON line.
 *   idle:     nothing more (a node without tracing that sent nothing over TLS)
 *   https:    one delivery request to an https: URL (nothing listens there)
 *   tracing:  starts tracing with an injected exporter
 */
import { registerHooks } from 'node:module';

const loaded = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(result.url);
    if (m) loaded.add(m[1]!);
    return result;
  },
});

const mode = process.argv[2];
await import('../../src/node/node.js');
const { HttpDispatcher } = await import('../../src/delivery/http/http-dispatcher.js');
const { SsrfGuard } = await import('../../src/delivery/http/ssrf-guard.js');
const { startTracing } = await import('../../src/observability/tracing-start.js');
const { createLogger } = await import('../../src/observability/logger.js');
const log = createLogger('silent');

const dispatcher = new HttpDispatcher(new SsrfGuard(['127.0.0.0/8']), 4, 65_536);
const tracing = await startTracing(log, mode === 'tracing' ? { exporter: { export: (_s: unknown, done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => {} } as never } : { env: {} });
let answer: unknown = null;
if (mode === 'https') {
  answer = await dispatcher.send({ url: new URL('https://127.0.0.1:9/hook'), headers: {}, body: Buffer.from('{}'), timeoutMs: 5_000 });
}
dispatcher.close();
await tracing.stop();
console.log(JSON.stringify({ tracing: tracing.enabled, answer, loaded: [...loaded].sort() }));
