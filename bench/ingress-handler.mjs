/**
 * Micro bench of the ingress handler alone (`node bench/ingress-handler.mjs`,
 * after `npm run build`): the pipeline of src/ingress/post-event.ts on a
 * captured request, with the queue and key cached, a log that acknowledges at
 * once and no HTTP. It prices what streamgate's own code adds per event, apart
 * from the HTTP server's I/O and the Kafka client, for API-key and signed requests, inline
 * validation and pool.
 *
 * BENCH_TRACE prices trace context: `off` (default: no traceparent, tracing
 * off), `header` (every request sends a traceparent, tracing off: validated and
 * stored), `on` (a traceparent, tracing on with an in-memory exporter: the
 * request span, its two step spans; the router's wrapper is not in this bench).
 */
import { createHash, createHmac } from 'node:crypto';
import { postEventHandler } from '../dist/ingress/post-event.js';
import { IngressAuth } from '../dist/auth/ingress-auth.js';
import { buildView } from '../dist/ingress/queue-directory.js';
import { generateApiKey } from '../dist/auth/api-key.js';
import { createValidator } from '../dist/auth/validation-pool.js';
import { encodeEvent } from '../dist/event-log/event-record.js';
import { NO_TRACING, startTracing } from '../dist/observability/tracing.js';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';

const N = Number(process.env.BENCH_N ?? 200_000);
const TRACE = process.env.BENCH_TRACE ?? 'off';
const exporter = new InMemorySpanExporter();
const tracing = TRACE === 'on' ? startTracing({ info() {} }, { exporter }) : NO_TRACING;
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const CONCURRENCY = 50;
const key = generateApiKey();
const signing = { keyId: 'sig_bench', secret: 'whsec_bench_secret' };
const view = (authMode) => buildView('ten_bench', { workspaceId: '1', licenseId: '1', workspaceArchived: false, workspaceSettings: null, queueId: '1', queuePublicId: 'que_b', queueName: 'q', settings: { authMode } }, { hopBudget: 10, dedupWindowSeconds: 86400 });
const queues = { 'api-key': view('api_key'), signed: view('signed_request') };
const stored = { keyId: key.keyId, licenseId: '1', licensePublicId: 'lic_b', workspaceId: '1', workspacePublicId: 'ten_bench', profile: 'ingress', secretHash: key.secretHash, queueScopes: null, revoked: false };
const body = Buffer.from(`{"pad":"${'x'.repeat(1014)}"}`);
const bodySha = createHash('sha256').update(body).digest('hex');

let nonce = 0;
function exchange(auth) {
  const headers = { 'content-type': 'application/json', 'x-service-partition-key': `k${nonce % 1000}`, host: '127.0.0.1', 'content-length': String(body.length) };
  if (TRACE !== 'off') headers.traceparent = TRACEPARENT;
  if (auth === 'api-key') headers['x-api-key'] = key.wire;
  else {
    const ts = String(Math.floor(Date.now() / 1000));
    const n = `n${nonce}`;
    Object.assign(headers, {
      'x-service-key-id': signing.keyId, 'x-service-timestamp': ts, 'x-service-nonce': n, 'x-service-content-sha256': bodySha,
      'x-service-signature': createHmac('sha256', signing.secret).update(`POST\n/events/ten_bench/q\n\n${signing.keyId}\n${ts}\n${n}\n${bodySha}`).digest('hex'),
    });
  }
  nonce++;
  let done;
  const finished = new Promise((r) => (done = r));
  const ex = {
    method: 'POST', path: '/events/ten_bench/q', query: '', headers, params: ['ten_bench', 'q'], remoteAddress: '127.0.0.1',
    body: Promise.resolve(body), aborted: false, answered: false,
    send(status) { if (status !== 202) throw new Error(`status ${status}`); done(); },
    sendJson() {}, sendError(err) { throw err; },
  };
  return { ex, finished };
}

async function run(auth, engine) {
  const validator = createValidator(engine, 1, 256);
  const authn = new IngressAuth(
    { lookup: () => stored },
    { activeKeys: () => new Map([[signing.keyId, signing.secret]]) },
    { consume: async () => true },
    validator,
    { skewSeconds: 300, paymentsToleranceSeconds: 300 },
  );
  // The log encodes like the Kafka writer does (msgpack), then acknowledges at once.
  const log = { append: async (record) => void encodeEvent(record), close: async () => {} };
  const handle = postEventHandler({ queues: { resolve: () => queues[auth] }, auth: authn, log, idempotency: null, keyMaxBytes: 255, idempotencyKeyMaxBytes: 255, mappedHeaderMaxBytes: 4096, tracing }, false);
  const once = async () => {
    const { ex, finished } = exchange(auth);
    if (tracing.enabled) {
      const span = tracing.startRequest(ex, 'POST /events/:tenant/:queue', TRACEPARENT, null, {});
      await handle(ex);
      span.end();
      exporter.reset();
    } else await handle(ex);
    await finished;
  };
  for (let i = 0; i < 5000; i++) await once(); // warm-up
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  let left = N;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (left-- > 0) await once();
  }));
  const used = process.cpuUsage(cpu);
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  await validator.close();
  // process.cpuUsage covers every thread of the process: the pool's work is counted too.
  return { auth, engine, perS: N / wallS, cpuUsPerEvent: (used.user + used.system) / N };
}

const out = [];
for (const auth of ['api-key', 'signed']) for (const engine of ['inline', 'pool']) out.push(await run(auth, engine));
console.log('| requests | validation | trace | handler calls/s (one event loop) | process CPU µs/event (all threads) |');
console.log('|---|---|---|---|---|');
for (const r of out) console.log(`| ${r.auth} | ${r.engine} | ${TRACE} | ${Math.round(r.perS).toLocaleString('en-US')} | ${r.cpuUsPerEvent.toFixed(1)} |`);
