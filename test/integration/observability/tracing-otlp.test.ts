import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, freePort, spawnNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';

/**
 * The deployment path of tracing: a `streamgate start` process whose
 * environment names an OTLP endpoint exports its spans there (OTLP/HTTP,
 * JSON), with service.name streamgate and the sender's trace id; the
 * receiver of the delivery continues the same trace.
 */

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SENDER = `00-${TRACE}-b7ad6b7169203331-01`;

t.test('OTEL_EXPORTER_OTLP_ENDPOINT set: spans reach the collector', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const collector = await startReceiver(t);
  const receiver = await startReceiver(t);
  const port = await freePort();
  await spawnNode(t, backends, port, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_SERVICE_NAME: '' });
  const api = clientFor(port, creds);
  await api.wire('otlp', 'otlp-target', `${receiver.url}/hook`);
  const res = await api.postEvent('otlp', '{"n":1}', { traceparent: SENDER });
  t.equal(res.status, 202);
  await receiver.waitFor((r) => r.length >= 1, 60_000, 'the delivery');
  t.match(String(receiver.requests[0]!.headers.traceparent), new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`), 'the receiver continues the sender\'s trace');
  // The OTLP/HTTP exporter sends JSON (ids as hex strings).
  type Exported = { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string }> }> }> };
  const exported = () =>
    collector.requests.filter((x) => x.path === '/v1/traces').map((x) => JSON.parse(x.body.toString()) as Exported);
  const spans = () => exported().flatMap((e) => e.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
  await collector.waitFor(() => spans().some((s) => s.traceId === TRACE && s.name === 'delivery attempt'), 30_000, 'the attempt span of the sender\'s trace');
  t.equal(collector.requests[0]!.method, 'POST');
  t.match(String(collector.requests[0]!.headers['content-type']), /application\/json/);
  const resource = exported()[0]!.resourceSpans[0]!.resource.attributes;
  t.equal(resource.find((a) => a.key === 'service.name')?.value.stringValue, 'streamgate', 'service.name');
  const inTrace = spans().filter((s) => s.traceId === TRACE);
  const ingress = inTrace.find((s) => s.name === 'POST /events/:tenant/:queue');
  t.equal(ingress?.parentSpanId, 'b7ad6b7169203331', 'the ingress span is the sender\'s child');
  for (const name of ['ingress auth', 'ingress append', 'delivery attempt']) {
    t.equal(inTrace.find((s) => s.name === name)?.parentSpanId, ingress?.spanId, `${name}: a child of the ingress span`);
  }
  const attempt = inTrace.find((s) => s.name === 'delivery attempt')!;
  t.equal(String(receiver.requests[0]!.headers.traceparent), `00-${TRACE}-${attempt.spanId}-01`, 'the receiver\'s parent is the exported attempt span');
});
