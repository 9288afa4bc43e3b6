import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Http1Error, Http1Pool, requestHead, type Http1Target } from '../../../../src/delivery/http/http1-pool.js';
import { SsrfGuard } from '../../../../src/delivery/http/ssrf-guard.js';

const lookup = new SsrfGuard(['127.0.0.0/8']).lookup as never;
const body = Buffer.from('{"a":1}');
const target = (port: number, path = '/in'): Http1Target => ({ host: `127.0.0.1:${port}`, hostname: '127.0.0.1', port, path, auth: null });

/** A node:http receiver counting the connections it was given. */
async function receiver(t: Test, handler: http.RequestListener, keepAliveTimeout = 5_000) {
  const srv = http.createServer(handler);
  srv.keepAliveTimeout = keepAliveTimeout;
  let connections = 0;
  srv.on('connection', () => connections++);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    srv.closeAllConnections();
    srv.close(() => r());
  }));
  return { port: (srv.address() as AddressInfo).port, connections: () => connections };
}

/** A raw TCP receiver that answers every request's bytes with `answer` (then optionally closes). */
async function rawReceiver(t: Test, answer: (request: string) => string | null) {
  const srv = net.createServer((socket) => {
    let seen = '';
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      const end = seen.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? 0);
      if (seen.length < end + 4 + length) return;
      const reply = answer(seen);
      seen = '';
      if (reply === null) socket.destroy();
      else socket.write(reply);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  return (srv.address() as AddressInfo).port;
}

const post = (pool: Http1Pool, tgt: Http1Target, headers: Record<string, string> = {}) => pool.post(tgt, headers, body, 5_000);

t.test('requests one after another share one kept-alive connection; the body arrives whole', async (t) => {
  const bodies: string[] = [];
  const r = await receiver(t, (req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      bodies.push(b);
      res.end('ok');
    });
  });
  const pool = new Http1Pool(lookup, 65_536);
  t.teardown(() => pool.close());
  for (let i = 0; i < 5; i++) {
    const res = await post(pool, target(r.port), { 'content-type': 'application/json' });
    t.match(res, { status: 200, reusable: true });
    t.equal(res.body.toString(), 'ok');
  }
  t.same(bodies, Array(5).fill('{"a":1}'));
  t.equal(r.connections(), 1, 'one connection for five requests');
});

t.test('concurrent requests each get a connection of their own', async (t) => {
  const r = await receiver(t, (_req, res) => setTimeout(() => res.end(), 50));
  const pool = new Http1Pool(lookup, 65_536);
  t.teardown(() => pool.close());
  const results = await Promise.all(Array.from({ length: 4 }, () => post(pool, target(r.port))));
  t.ok(results.every((x) => x.status === 200));
  t.equal(r.connections(), 4);
  await post(pool, target(r.port));
  t.equal(r.connections(), 4, 'then one of them is reused');
});

t.test('a connection the receiver closed while idle is not used again', async (t) => {
  const r = await receiver(t, (_req, res) => res.end(), 50);
  const pool = new Http1Pool(lookup, 65_536);
  t.teardown(() => pool.close());
  t.match(await post(pool, target(r.port)), { status: 200 });
  // node:http closes an idle connection about a second after keepAliveTimeout.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  t.match(await post(pool, target(r.port)), { status: 200 }, 'the next request opens a fresh connection');
  t.equal(r.connections(), 2);
});

t.test('connection: close, interim answers and chunked bodies from a raw receiver', async (t) => {
  let n = 0;
  const port = await rawReceiver(t, () => {
    n++;
    if (n === 1) return 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n';
    return 'HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy';
  });
  const pool = new Http1Pool(lookup, 65_536);
  t.teardown(() => pool.close());
  const first = await post(pool, target(port));
  t.match(first, { status: 200, reusable: true });
  t.equal(first.body.toString(), 'abc');
  const second = await post(pool, target(port));
  t.match(second, { status: 503, reusable: false, headers: { 'retry-after': '7' } });
});

t.test('answers read in pieces on several connections at once arrive whole', async (t) => {
  // Each connection gets its answer a few bytes at a time, the connections
  // taking turns, so a head, a chunk-size line and a body are cut anywhere and
  // each read of one connection falls between two reads of another.
  const answers = [
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Which: first\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
    'HTTP/1.1 202 Accepted\r\nContent-Length: 12\r\nX-Which: second\r\n\r\nsecond body!',
    'HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\nX-Which: third\r\n\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n',
  ];
  const waiting: Array<{ socket: net.Socket; index: number }> = [];
  const srv = net.createServer((socket) => {
    let seen = '';
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      const end = seen.indexOf('\r\n\r\n');
      if (end === -1 || seen.length < end + 4 + body.length) return;
      const index = Number(/x-answer: (\d)/i.exec(seen)![1]);
      waiting.push({ socket, index });
      if (waiting.length === answers.length) void trickle();
    });
  });
  const trickle = async () => {
    const at = waiting.map(() => 0);
    while (waiting.some((w, i) => at[i]! < answers[w.index]!.length)) {
      for (const [i, w] of waiting.entries()) {
        const text = answers[w.index]!;
        if (at[i]! >= text.length) continue;
        w.socket.write(text.slice(at[i], at[i]! + 3), 'latin1');
        at[i]! += 3;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    for (const w of waiting) w.socket.destroy();
    srv.close(() => r());
  }));
  const port = (srv.address() as AddressInfo).port;
  const pool = new Http1Pool(lookup, 65_536);
  t.teardown(() => pool.close());
  const results = await Promise.all(answers.map((_, i) => post(pool, target(port), { 'x-answer': String(i) })));
  t.match(results[0], { status: 200, reusable: true, headers: { 'x-which': 'first' } });
  t.equal(results[0]!.body.toString(), 'hello world');
  t.match(results[1], { status: 202, reusable: true, headers: { 'x-which': 'second' } });
  t.equal(results[1]!.body.toString(), 'second body!');
  t.match(results[2], { status: 400, reusable: true, headers: { 'x-which': 'third' } });
  t.equal(results[2]!.body.toString(), 'abcdefghijklmnopqrstuvwxyz');
});

t.test('network failures are Http1Errors with node:http codes', async (t) => {
  const pool = new Http1Pool(lookup, 65_536);
  t.teardown(() => pool.close());
  // A port nobody listens on.
  const closed = net.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  await t.rejects(post(pool, target(deadPort)), { code: 'ECONNREFUSED' });

  const resetPort = await rawReceiver(t, () => null);
  await t.rejects(post(pool, target(resetPort)), { code: 'ECONNRESET' }, 'closed without an answer');

  const cutPort = await rawReceiver(t, () => 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this');
  const cut = new Http1Pool(lookup, 65_536);
  t.teardown(() => cut.close());
  await t.rejects(cut.post(target(cutPort), {}, body, 100), { code: 'ETIMEDOUT', message: 'no complete response within 100 ms' }, 'cut off mid-body at the deadline');

  const refused = new Http1Pool(new SsrfGuard([]).lookup as never, 65_536);
  t.teardown(() => refused.close());
  await t.rejects(refused.post({ ...target(deadPort), hostname: 'localhost', host: `localhost:${deadPort}` }, {}, body, 5_000), { code: 'ESSRF' }, 'the lookup refuses the address');

  const bad = await rawReceiver(t, () => 'SMTP ready\r\n\r\n');
  await t.rejects(post(pool, target(bad)), { code: 'EPROTO' }, 'not HTTP');
});

t.test('the request head: as node:http writes it, and refused where node:http refuses', async (t) => {
  const tgt: Http1Target = { host: '[::1]:8080', hostname: '::1', port: 8080, path: '/a?b=1', auth: 'us er:p@ss' };
  t.equal(
    requestHead(tgt, { 'x-one': '1', 'content-length': '7' }, 7),
    `POST /a?b=1 HTTP/1.1\r\nx-one: 1\r\ncontent-length: 7\r\nHost: [::1]:8080\r\nAuthorization: Basic ${Buffer.from('us er:p@ss').toString('base64')}\r\nConnection: keep-alive\r\n\r\n`,
  );
  t.equal(requestHead({ ...tgt, auth: null }, { host: 'h', connection: 'close' }, 0), 'POST /a?b=1 HTTP/1.1\r\nhost: h\r\nconnection: close\r\ncontent-length: 0\r\n\r\n', 'given Host and Connection are kept');
  for (const [headers, code] of [
    [{ 'x-bad': 'a\r\nx-injected: 1' }, 'ERR_INVALID_CHAR'],
    [{ 'x-bad': 'nul\u0000' }, 'ERR_INVALID_CHAR'],
    [{ 'x-bad': 'wide\u0100' }, 'ERR_INVALID_CHAR'],
    [{ 'bad name': 'v' }, 'ERR_INVALID_HTTP_TOKEN'],
  ] as const) {
    t.throws(() => requestHead(tgt, headers, 0), new Http1Error('', code), code);
  }
  t.doesNotThrow(() => requestHead(tgt, { 'x-latin1': 'caf\u00e9\tok' }, 0), 'latin1 and HTAB pass, as in node:http');
});
