import t, { type Test } from 'tap';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { loadConfig } from '../../../src/config/load-config.js';
import { createLogger } from '../../../src/observability/logger.js';
import { startNode, type RunningNode } from '../../../src/node/node.js';
import { backendConfig, freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor } from '../../helpers/nodes.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';

/**
 * Trace context across the service (W3C Trace Context): a sender's traceparent
 * reaches the receiver of every delivery attempt, with tracing on (spans
 * exported, the attempt span named as the parent) and off (passed on unchanged).
 */

const SENDER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SENDER_SPAN = '00f067aa0ba902b7';
const SENDER = `00-${SENDER_TRACE}-${SENDER_SPAN}-01`;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

async function node(t: Test, exporter?: InMemorySpanExporter): Promise<{ node: RunningNode; api: ReturnType<typeof clientFor> }> {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const config = loadConfig({}, backendConfig(backends));
  const running = await startNode(config, createLogger(config.log.level), exporter ? { tracing: { exporter, processor: 'simple' } } : {});
  t.teardown(() => running.stop());
  return { node: running, api: clientFor(running.port, creds) };
}

function requestFor(received: Received[], eventId: string): Received[] {
  return received.filter((r) => r.headers['x-service-event-id'] === eventId);
}

async function spansFor(exporter: InMemorySpanExporter, what: string, predicate: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  const until = Date.now() + 30_000;
  while (!predicate(exporter.getFinishedSpans())) {
    if (Date.now() > until) throw new Error(`no spans for ${what}: ${exporter.getFinishedSpans().map((s) => s.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return exporter.getFinishedSpans();
}

const attemptsOf = (spans: ReadableSpan[], eventId: string) =>
  spans.filter((s) => s.name === 'delivery attempt' && s.attributes['streamgate.event_id'] === eventId);

t.test('tracing on: ingress, its auth and append steps and each attempt are spans of the sender\'s trace; the receiver continues it', async (t) => {
  const exporter = new InMemorySpanExporter();
  const { api } = await node(t, exporter);
  const receiver = await startReceiver(t);
  // The first attempt of each event fails: two attempts, two spans, two traceparents.
  const seen = new Set<string>();
  receiver.responder = (req, res) => {
    const id = String(req.headers['x-service-event-id']);
    res.statusCode = seen.has(id) ? 200 : 503;
    seen.add(id);
    res.end();
  };
  await api.wire('traced', 'traced-target', `${receiver.url}/hook`);

  const posted = await api.postEvent('traced', '{"n":1}', { traceparent: SENDER, tracestate: 'rojo=00f067aa0ba902b7' });
  t.equal(posted.status, 202);
  t.match(posted.headers.get('x-request-id'), /\S/, 'a request id on the 202');
  const eventId = posted.body.eventId as string;
  await receiver.waitFor((r) => requestFor(r, eventId).length >= 2, 60_000, 'two attempts');
  const spans = await spansFor(exporter, 'two attempts', (s) => attemptsOf(s, eventId).length >= 2);

  const ingress = spans.find((s) => s.name === 'POST /events/:tenant/:queue' && s.spanContext().traceId === SENDER_TRACE);
  t.ok(ingress, 'an ingress span in the sender\'s trace');
  t.equal(ingress!.parentSpanContext?.spanId, SENDER_SPAN, 'child of the sender\'s span');
  t.equal(ingress!.attributes['http.response.status_code'], 202);
  t.equal(ingress!.attributes['http.route'], '/events/:tenant/:queue');
  t.equal(ingress!.attributes['streamgate.request_id'], posted.headers.get('x-request-id'));
  t.equal(ingress!.resource.attributes['service.name'], 'streamgate');
  for (const step of ['ingress auth', 'ingress append']) {
    const span = spans.find((s) => s.name === step && s.parentSpanContext?.spanId === ingress!.spanContext().spanId);
    t.ok(span, `${step} is a child span of the ingress span`);
    t.equal(span?.spanContext().traceId, SENDER_TRACE);
  }

  const attempts = attemptsOf(spans, eventId).sort((a, b) => Number(a.attributes['streamgate.attempt']) - Number(b.attributes['streamgate.attempt']));
  const received = requestFor(receiver.requests, eventId);
  t.equal(attempts.length, 2);
  for (const [i, attempt] of attempts.entries()) {
    t.equal(attempt.spanContext().traceId, SENDER_TRACE, `attempt ${i + 1}: same trace as the sender`);
    t.equal(attempt.parentSpanContext?.spanId, ingress!.spanContext().spanId, `attempt ${i + 1}: child of the ingress span (the stored context)`);
    t.equal(attempt.attributes['streamgate.target'] !== undefined, true);
    const header = String(received[i]!.headers.traceparent);
    const m = TRACEPARENT.exec(header);
    t.ok(m, `attempt ${i + 1}: the receiver got a valid traceparent (${header})`);
    t.equal(m?.[1], SENDER_TRACE, `attempt ${i + 1}: with the sender's trace id`);
    t.equal(m?.[2], attempt.spanContext().spanId, `attempt ${i + 1}: naming the attempt span as its parent`);
    t.equal(m?.[3], '01', 'sampled');
    t.equal(received[i]!.headers.tracestate, 'rojo=00f067aa0ba902b7', 'tracestate passed on');
  }
  t.equal(attempts[0]!.attributes['http.response.status_code'], 503);
  t.equal(attempts[1]!.attributes['http.response.status_code'], 200);
  t.not(received[0]!.headers.traceparent, received[1]!.headers.traceparent, 'a new parent per attempt');

  // Without a traceparent, and with an invalid one: a new trace, still one trace from ingress to receiver.
  for (const [label, headers] of [['none', {}], ['invalid (upper-case hex)', { traceparent: SENDER.toUpperCase(), tracestate: 'rojo=1' }]] as const) {
    const res = await api.postEvent('traced', '{"n":2}', headers);
    t.equal(res.status, 202, `${label}: accepted`);
    const id = res.body.eventId as string;
    await receiver.waitFor((r) => requestFor(r, id).length >= 1, 60_000, `${label}: delivered`);
    const all = await spansFor(exporter, label, (s) => attemptsOf(s, id).length >= 1);
    const attempt = attemptsOf(all, id)[0]!;
    const header = String(requestFor(receiver.requests, id)[0]!.headers.traceparent);
    t.not(attempt.spanContext().traceId, SENDER_TRACE, `${label}: a new trace`);
    t.equal(TRACEPARENT.exec(header)?.[1], attempt.spanContext().traceId, `${label}: the receiver continues the attempt's trace`);
    const root = all.find((s) => s.name === 'POST /events/:tenant/:queue' && s.spanContext().traceId === attempt.spanContext().traceId);
    t.ok(root, `${label}: the ingress span starts that trace`);
    t.equal(root?.parentSpanContext, undefined, `${label}: as a root`);
    t.equal(requestFor(receiver.requests, id)[0]!.headers.tracestate, undefined, `${label}: no tracestate without a valid traceparent`);
  }

  // Management routes are spans too, and a refused request is one with its status.
  const list = await api.manage('GET', api.tenantPath('/queues/traced'));
  t.equal(list.status, 200);
  const denied = await api.request('GET', api.tenantPath('/queues/traced'), { headers: { 'x-api-key': 'qak_wrong', 'x-license-publicid': 'lic_x', traceparent: SENDER } });
  t.equal(denied.status, 401);
  const mgmt = await spansFor(exporter, 'management', (s) => s.filter((x) => x.name === 'GET /v1/tenants/:tenant/queues/:name').length >= 2);
  const routeSpans = mgmt.filter((x) => x.name === 'GET /v1/tenants/:tenant/queues/:name');
  t.same(routeSpans.map((s) => s.attributes['http.response.status_code']).sort(), [200, 401]);
  t.equal(routeSpans.find((s) => s.attributes['http.response.status_code'] === 401)?.spanContext().traceId, SENDER_TRACE, 'a management span continues the caller\'s trace');
});

t.test('tracing off: the sender\'s traceparent and tracestate reach the receiver unchanged; an invalid one is not passed on', async (t) => {
  const { api } = await node(t);
  const receiver = await startReceiver(t);
  await api.wire('plain', 'plain-target', `${receiver.url}/hook`);

  const traced = await api.postEvent('plain', '{"n":1}', { traceparent: SENDER, tracestate: 'congo=t61rcWkgMzE' });
  const unsampled = await api.postEvent('plain', '{"n":2}', { traceparent: SENDER.replace(/01$/, '00') });
  const invalid = await api.postEvent('plain', '{"n":3}', { traceparent: `00-${'0'.repeat(32)}-${SENDER_SPAN}-01`, tracestate: 'congo=1' });
  const none = await api.postEvent('plain', '{"n":4}');
  for (const res of [traced, unsampled, invalid, none]) t.equal(res.status, 202, 'accepted: trace context never refuses an event');
  const ids = [traced, unsampled, invalid, none].map((r) => r.body.eventId as string);
  await receiver.waitFor((r) => ids.every((id) => requestFor(r, id).length > 0), 60_000, 'all four delivered');
  const [a, b, c, d] = ids.map((id) => requestFor(receiver.requests, id)[0]!);
  t.equal(a!.headers.traceparent, SENDER, 'unchanged');
  t.equal(a!.headers.tracestate, 'congo=t61rcWkgMzE', 'tracestate unchanged');
  t.equal(b!.headers.traceparent, SENDER.replace(/01$/, '00'), 'an unsampled one too');
  t.equal(c!.headers.traceparent, undefined, 'an invalid traceparent (zero trace id) is not passed on');
  t.equal(c!.headers.tracestate, undefined, 'nor its tracestate');
  t.equal(d!.headers.traceparent, undefined, 'none made up when tracing is off');
});
