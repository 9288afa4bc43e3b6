import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { HttpDispatcher } from '../../../../src/delivery/http/http-dispatcher.js';
import { SsrfGuard } from '../../../../src/delivery/http/ssrf-guard.js';

async function server(t: Test, handler: http.RequestListener): Promise<string> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    srv.closeAllConnections();
    srv.close(() => r());
  }));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

const allowLoopback = new SsrfGuard(['127.0.0.0/8']);
const body = Buffer.from('{}');

t.test('one deadline covers a receiver that never answers', async (t) => {
  const url = await server(t, () => {});
  const d = new HttpDispatcher(allowLoopback, 4, 65_536);
  t.teardown(() => d.close());
  const r = await d.send({ url: new URL(url), headers: {}, body, timeoutMs: 300 });
  t.match(r, { kind: 'error', code: 'ETIMEDOUT' });
  t.ok(r.durationMs >= 290 && r.durationMs < 600, `${r.durationMs} ms`);
});

t.test('and one that drips its body', async (t) => {
  const url = await server(t, (_req, res) => {
    res.writeHead(200);
    const timer = setInterval(() => res.write('x'), 50);
    res.on('close', () => clearInterval(timer));
  });
  const d = new HttpDispatcher(allowLoopback, 4, 65_536);
  t.teardown(() => d.close());
  const r = await d.send({ url: new URL(url), headers: {}, body, timeoutMs: 300 });
  t.match(r, { kind: 'error', code: 'ETIMEDOUT' }, 'headers arrived, the body never finished');
  t.ok(r.durationMs < 600);
});

t.test('at most maxResponseBytes are read; the status is the answer', async (t) => {
  const url = await server(t, (_req, res) => {
    res.writeHead(201);
    res.end(Buffer.alloc(1_000_000, 'y'));
  });
  const d = new HttpDispatcher(allowLoopback, 4, 1024);
  t.teardown(() => d.close());
  const r = await d.send({ url: new URL(url), headers: {}, body, timeoutMs: 2000 });
  t.match(r, { kind: 'response', status: 201 });
  t.equal(r.kind === 'response' ? r.body.length : -1, 1024);
});

t.test('redirects are not followed', async (t) => {
  let hits = 0;
  const url = await server(t, (_req, res) => {
    hits++;
    res.writeHead(307, { location: '/elsewhere' });
    res.end();
  });
  const d = new HttpDispatcher(allowLoopback, 4, 1024);
  t.teardown(() => d.close());
  t.match(await d.send({ url: new URL(url), headers: {}, body, timeoutMs: 2000 }), { kind: 'response', status: 307 });
  t.equal(hits, 1);
});

t.test('the SSRF guard refuses at connect, also for a name resolving to loopback', async (t) => {
  let hits = 0;
  const url = await server(t, (_req, res) => {
    hits++;
    res.end();
  });
  const d = new HttpDispatcher(new SsrfGuard([]), 4, 1024);
  t.teardown(() => d.close());
  const port = new URL(url).port;
  t.match(await d.send({ url: new URL(`http://localhost:${port}/`), headers: {}, body, timeoutMs: 2000 }), { kind: 'error', code: 'ESSRF' });
  t.match(await d.send({ url: new URL(`http://127.0.0.1:${port}/`), headers: {}, body, timeoutMs: 2000 }), { kind: 'error', code: 'ESSRF' });
  t.equal(hits, 0);
});

t.test('a header node:http refuses is an attempt error, not a crash', async (t) => {
  const url = await server(t, (_req, res) => res.end());
  const d = new HttpDispatcher(allowLoopback, 4, 1024);
  t.teardown(() => d.close());
  t.match(await d.send({ url: new URL(url), headers: { 'x-bad': 'a\nb' }, body, timeoutMs: 2000 }), { kind: 'error' });
});

t.test('attempts beyond maxSocketsPerOrigin wait for a slot before their deadline starts', async (t) => {
  let inFlight = 0;
  let most = 0;
  const url = await server(t, (_req, res) => {
    most = Math.max(most, ++inFlight);
    setTimeout(() => {
      inFlight--;
      res.end();
    }, 100);
  });
  const d = new HttpDispatcher(allowLoopback, 2, 1024);
  t.teardown(() => d.close());
  // Six requests of 100 ms through two slots take ~300 ms; each has a 250 ms deadline of its own.
  const results = await Promise.all(Array.from({ length: 6 }, () => d.send({ url: new URL(url), headers: {}, body, timeoutMs: 250 })));
  t.equal(most, 2, 'never more than two at the receiver');
  t.ok(results.every((r) => r.kind === 'response' && r.status === 200), 'no attempt timed out while queued');
});

t.test('the request line and headers are what request(url, options) sent: path and query, Host with port, URL credentials, content-length last', async (t) => {
  const seen: Array<{ url: string | undefined; raw: string[] }> = [];
  const base = await server(t, (req, res) => {
    seen.push({ url: req.url, raw: req.rawHeaders });
    req.resume();
    req.on('end', () => res.end());
  });
  const d = new HttpDispatcher(allowLoopback, 4, 65_536);
  t.teardown(() => d.close());
  const port = new URL(base).port;
  const url = new URL(`http://us%20er:p%40ss@127.0.0.1:${port}/a/b%20c?x=1&y=%2F`);
  for (let i = 0; i < 2; i++) {
    // The same URL object twice: the second request uses what the first derived.
    const r = await d.send({ url, headers: { 'x-one': '1', 'content-type': 'application/json' }, body, timeoutMs: 2000 });
    t.match(r, { kind: 'response', status: 200 });
  }
  const expected = ['x-one', '1', 'content-type', 'application/json', 'content-length', '2', 'Host', `127.0.0.1:${port}`,
    'Authorization', `Basic ${Buffer.from('us er:p@ss').toString('base64')}`, 'Connection', 'keep-alive'];
  for (const s of seen) {
    t.equal(s.url, '/a/b%20c?x=1&y=%2F');
    t.same(s.raw, expected);
  }
});
