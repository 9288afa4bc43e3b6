import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { startLoggedNode } from '../../helpers/log-capture.js';
import { bootstrapDatabase, clientFor } from '../../helpers/nodes.js';
import { rawPost, rawRequest } from '../../helpers/raw-http.js';

/**
 * X-Request-Id on every answer: the client's when sane, a made one otherwise
 * (also on the refusals the server answers itself, before any route), and the same id in
 * the log lines of the request.
 */

const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const { node, log } = await startLoggedNode(t, backends, { log: { level: 'debug', accessLog: { sampleRate: 1 } } });
const api = clientFor(node.port, creds);
await api.wire('ids', 'ids-target', 'http://127.0.0.1:9/none');
const MADE = /^[A-Za-z0-9_-]{8}-[0-9a-z]+$/;

/** The log lines that name `reqId`. */
function linesOf(reqId: string): Array<Record<string, unknown>> {
  return log.entries().filter((e) => e.reqId === reqId);
}

async function eventually(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`never: ${what}`);
}

t.test('a sane id is echoed on 2xx and on errors, and names the request\'s log line', async (t) => {
  const cases: Array<[string, () => Promise<{ status: number; headers: Headers }>, number]> = [
    ['mgmt-ok-1', () => api.request('GET', api.tenantPath('/queues/ids'), { headers: { 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId, 'x-request-id': 'mgmt-ok-1' } }), 200],
    ['mgmt-401.x', () => api.request('GET', api.tenantPath('/queues/ids'), { headers: { 'x-api-key': 'qak_wrong', 'x-license-publicid': creds.licensePublicId, 'x-request-id': 'mgmt-401.x' } }), 401],
    ['ingress:202', () => api.postEvent('ids', '{"a":1}', { 'x-request-id': 'ingress:202' }), 202],
    ['ingress/401', () => api.postEvent('ids', '{"a":1}', { 'x-api-key': 'qik_not_a_key', 'x-request-id': 'ingress/401' }), 401],
    ['nothing-here-404', () => api.request('GET', '/no/such/path', { headers: { 'x-request-id': 'nothing-here-404' } }), 404],
    ['wrong-method-405', () => api.request('DELETE', '/healthz', { headers: { 'x-request-id': 'wrong-method-405' } }), 405],
    ['bad-json-400', () => api.request('PUT', api.tenantPath('/queues/ids'), { raw: '{not json', headers: { 'content-type': 'application/json', 'x-api-key': creds.buildKey, 'x-license-publicid': creds.licensePublicId, 'x-request-id': 'bad-json-400' } }), 400],
  ];
  for (const [id, call, status] of cases) {
    const res = await call();
    t.equal(res.status, status, `${id}: ${status}`);
    t.equal(res.headers.get('x-request-id'), id, `${id}: echoed`);
    // 2xx ingress is not logged (no access log for ingress); everything else has a line.
    if (id === 'ingress:202') continue;
    await eventually(`a log line for ${id}`, () => linesOf(id).length > 0);
    const line = linesOf(id)[0]!;
    t.equal(line.status, status, `${id}: its log line has the status`);
    t.type(line.route, 'string', `${id}: and the route pattern`);
  }
  const access = linesOf('mgmt-ok-1').find((l) => l.msg === 'request')!;
  t.match(access, { method: 'GET', route: '/v1/tenants/:tenant/queues/:name', status: 200 }, 'access line: method, pattern, status');
  t.type(access.durationMs, 'number', 'and duration');
  t.notOk(log.text.includes(`/v1/tenants/${creds.tenantPublicId}/queues/ids`), 'the pattern is logged, not the path');
});

t.test('an id that is too long or holds other characters is replaced by a made one', async (t) => {
  for (const offered of ['x'.repeat(65), 'has space', 'quote"d', 'per%0d%0acent', 'ünï']) {
    const res = await api.request('GET', '/healthz', { headers: { 'x-request-id': offered } });
    t.equal(res.status, 200);
    const id = res.headers.get('x-request-id')!;
    t.not(id, offered);
    t.match(id, MADE, `${JSON.stringify(offered)} replaced by a made id`);
  }
  const a = await api.request('GET', '/healthz');
  const b = await api.request('GET', '/healthz');
  t.match(a.headers.get('x-request-id'), MADE, 'none sent: one made');
  t.not(a.headers.get('x-request-id'), b.headers.get('x-request-id'), 'a new one per request');
});

t.test('control characters and CR/LF in the id never reach the answer (raw socket)', async (t) => {
  const path = `/events/${creds.tenantPublicId}/ids`;
  const attempts: Array<[string, Buffer]> = [
    ['a control character', Buffer.from('abc\u0001def')],
    ['a bare CR and a header', Buffer.from('abc\rset-cookie: evil=1')],
    ['a bare LF and a header', Buffer.from('abc\nset-cookie: evil=1')],
    ['NUL', Buffer.from('abc\u0000')],
  ];
  for (const [label, value] of attempts) {
    const res = await rawRequest(node.port, rawPost(path, [['x-api-key', creds.ingressKey], ['content-type', 'application/json'], ['x-request-id', value]], Buffer.from('{}')));
    t.ok(res.status !== null, `${label}: answered (${res.status})`);
    const head = res.raw.slice(0, res.raw.indexOf('\r\n\r\n'));
    const ids = head.split('\r\n').filter((l) => /^x-request-id:/i.test(l));
    t.equal(ids.length, 1, `${label}: one X-Request-Id`);
    t.match(ids[0], new RegExp(`^x-request-id: ${MADE.source.slice(1, -1)}$`, 'i'), `${label}: a made one`);
    t.notMatch(head, /set-cookie|evil/i, `${label}: nothing injected`);
  }
});

t.test('413 and the parser\'s own refusals carry an id too', async (t) => {
  const big = await api.postEvent('ids', Buffer.alloc(2 * 1024 * 1024, 0x61), { 'x-request-id': 'too-big' });
  t.equal(big.status, 413);
  t.match(big.headers.get('x-request-id'), /\S/, '413 has an id');
  const malformed = await rawRequest(node.port, Buffer.from('GET / HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n'));
  t.equal(malformed.status, 400);
  t.match(malformed.raw, new RegExp(`\r\nx-request-id: ${MADE.source.slice(1, -1)}\r\n`, 'i'), '400 from the parser has a made id');
});

t.test('a 413 from a route\'s own limit (the request was read whole) echoes the client\'s id', async (t) => {
  // The sign-in route takes 4 KiB, under the management family's limit: the parser reads it, the route refuses it.
  const res = await api.request('POST', '/console/api/session', { raw: JSON.stringify({ licensePublicId: 'x', key: 'k'.repeat(5_000) }), headers: { 'content-type': 'application/json', 'x-request-id': 'too-big-route' } });
  t.equal(res.status, 413);
  t.equal(res.headers.get('x-request-id'), 'too-big-route');
});
