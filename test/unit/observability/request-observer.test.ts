import { Writable } from 'node:stream';
import t from 'tap';
import { ServiceError } from '../../../src/errors.js';
import type { Exchange } from '../../../src/http/exchange.js';
import { createLogger } from '../../../src/observability/logger.js';
import { RequestObserver } from '../../../src/observability/request-observer.js';
import { NO_TRACING } from '../../../src/observability/tracing.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const dest = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, log: createLogger(level, 'test', dest) };
}

function exchange(requestId: string): Exchange {
  return { method: 'GET', path: '/v1/x?token=secret', query: 'token=secret', headers: { 'x-api-key': 'qak_secret' }, requestId, status: 0, send(status: number) { (this as { status: number }).status = status; } } as unknown as Exchange;
}

t.test('nothing on (no tracing, access log at 0, level above debug): the handler is registered as it is', async (t) => {
  const { log } = capture('info');
  const handler = () => {};
  t.equal(new RequestObserver(log, NO_TRACING, 0).wrap('GET', '/v1/x', handler), handler);
  t.equal(new RequestObserver(log, NO_TRACING, 1).wrap('POST', '/events/:tenant/:queue', handler), handler, 'ingress is never access-logged');
  t.equal(new RequestObserver(log, NO_TRACING, 1).wrap('GET', '/readyz', handler), handler, 'nor are probes');
});

t.test('access log: method, pattern, status, duration and request id; no path, query or header', async (t) => {
  const { lines, log } = capture('info');
  const observer = new RequestObserver(log, NO_TRACING, 1);
  await observer.wrap('GET', '/v1/x', (ex) => ex.send(200, ''))(exchange('r-1'));
  await t.rejects(async () => observer.wrap('GET', '/v1/x', () => Promise.reject(new ServiceError('invalid_api_key')))(exchange('r-2')));
  t.equal(lines.length, 2);
  t.match(lines[0], { msg: 'request', reqId: 'r-1', method: 'GET', route: '/v1/x', status: 200 });
  t.type(lines[0]!.durationMs, 'number');
  t.match(lines[1], { msg: 'request', reqId: 'r-2', status: 401 });
  t.notMatch(JSON.stringify(lines), /secret/);
});

t.test('debug: a refused request gets a line with its id, status and code', async (t) => {
  const { lines, log } = capture('debug');
  const observer = new RequestObserver(log, NO_TRACING, 0);
  await t.rejects(async () => observer.wrap('POST', '/events/:tenant/:queue', () => { throw new ServiceError('not_found'); })(exchange('r-3')));
  await observer.wrap('POST', '/events/:tenant/:queue', (ex) => ex.send(202, ''))(exchange('r-4'));
  t.equal(lines.length, 1, 'a 202 has no line');
  t.match(lines[0], { msg: 'request refused', reqId: 'r-3', status: 404, code: 'not_found', route: '/events/:tenant/:queue' });
});
