import t, { type Test } from 'tap';
import { createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { HttpDispatcher } from '../../../../src/delivery/http/http-dispatcher.js';
import { loadConfig } from '../../../../src/config/load-config.js';
import { classify } from '../../../../src/delivery/outcome.js';
import { SsrfGuard } from '../../../../src/delivery/http/ssrf-guard.js';
import { loadTlsTrust } from '../../../../src/delivery/http/undici-client.js';
import { makeTestPki, startHttpsReceiver, startRawTlsReceiver } from '../../../helpers/tls-receiver.js';

const pki = makeTestPki(t);
const allowLoopback = new SsrfGuard(['127.0.0.0/8', '::1/128']);
const trust = loadTlsTrust(pki.caFile);
const body = Buffer.from('{"a":1}');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function dispatcher(t: Test, opts: { guard?: SsrfGuard; trusted?: boolean; maxResponseBytes?: number } = {}) {
  const d = new HttpDispatcher(opts.guard ?? allowLoopback, 4, opts.maxResponseBytes ?? 65_536, opts.trusted === false ? {} : trust);
  t.teardown(() => d.close());
  return d;
}
const post = (d: HttpDispatcher, url: string, timeoutMs = 3000, headers: Record<string, string> = {}) =>
  d.send({ url: new URL(url), headers: { 'content-type': 'application/json', ...headers }, body, timeoutMs });

const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';

t.test('a certificate from a CA trusted through delivery.tls.caFile: delivered, by address and by name', async (t) => {
  const r = await startHttpsReceiver(t, pki.valid);
  const d = dispatcher(t);
  t.match(await post(d, `${r.url}/in`), { kind: 'response', status: 200 });
  t.match(await post(d, `https://localhost:${r.port}/in`), { kind: 'response', status: 200 }, 'SNI and the certificate check use the name; the connection goes to a checked address');
  t.same(r.bodies.map(String), ['{"a":1}', '{"a":1}']);
});

t.test('without the CA configured the same receiver is not trusted: a clear error, retried per policy', async (t) => {
  const r = await startHttpsReceiver(t, pki.valid);
  const res = await post(dispatcher(t, { trusted: false }), r.url);
  t.match(res, { kind: 'error', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', error: /TLS: unable to verify the first certificate/ });
  t.match(classify(res), { kind: 'retry' });
  t.equal(r.bodies.length, 0, 'nothing was sent');
});

t.test('an untrusted (self-signed) certificate', async (t) => {
  const r = await startHttpsReceiver(t, pki.untrusted);
  const res = await post(dispatcher(t), r.url);
  t.match(res, { kind: 'error', code: 'DEPTH_ZERO_SELF_SIGNED_CERT', error: /self-signed certificate/ });
  t.match(classify(res), { kind: 'retry', reason: /DEPTH_ZERO_SELF_SIGNED_CERT: TLS: self-signed certificate/ });
  t.equal(r.bodies.length, 0);
});

t.test('an expired certificate', async (t) => {
  const r = await startHttpsReceiver(t, pki.expired);
  const res = await post(dispatcher(t), r.url);
  t.match(res, { kind: 'error', code: 'CERT_HAS_EXPIRED', error: /certificate has expired/ });
  t.match(classify(res), { kind: 'retry' });
  t.equal(r.bodies.length, 0);
});

t.test('a certificate for another host name', async (t) => {
  const r = await startHttpsReceiver(t, pki.wrongHost);
  const d = dispatcher(t);
  t.match(await post(d, r.url), { kind: 'error', code: 'ERR_TLS_CERT_ALTNAME_INVALID', error: /IP: 127\.0\.0\.1 is not in the cert's list: / });
  t.match(await post(d, `https://localhost:${r.port}/`), { kind: 'error', code: 'ERR_TLS_CERT_ALTNAME_INVALID', error: /Host: localhost\. is not in the cert's altnames: DNS:wrong\.example/ });
  t.equal(r.bodies.length, 0);
});

t.test('keep-alive: several deliveries over one TLS connection', async (t) => {
  const r = await startHttpsReceiver(t, pki.valid);
  const d = dispatcher(t);
  for (let i = 0; i < 5; i++) t.match(await post(d, r.url), { kind: 'response', status: 200 });
  t.equal(r.connections(), 1);
});

t.test('a receiver that closes idle connections before the client would: nothing is lost', async (t) => {
  const r = await startRawTlsReceiver(t, pki.valid, () => OK, 150);
  const d = dispatcher(t);
  for (let i = 0; i < 3; i++) {
    t.match(await post(d, r.url), { kind: 'response', status: 200 });
    await sleep(400); // the receiver closed the connection meanwhile
  }
  t.equal(r.answered(), 3);
  t.equal(r.connections(), 3);
});

t.test('a receiver that drops a kept-alive connection as the next request arrives: sent again on a fresh connection', async (t) => {
  // The race a short server-side idle timeout makes: the request goes out on a connection the receiver is closing.
  const r = await startRawTlsReceiver(t, pki.valid, (_req, earlier) => (earlier === 0 ? OK : null));
  const d = dispatcher(t);
  for (let i = 0; i < 4; i++) t.match(await post(d, r.url), { kind: 'response', status: 200 }, `delivery ${i + 1}`);
  t.equal(r.answered(), 4, 'every delivery answered');
  t.equal(r.connections(), 4, 'each later delivery was dropped on the reused connection, then sent on a fresh one');
});

t.test('a receiver that never answers on any connection still fails the attempt (one resend at most)', async (t) => {
  let seen = 0;
  const r = await startRawTlsReceiver(t, pki.valid, () => {
    seen++;
    return null;
  });
  t.match(await post(dispatcher(t), r.url), { kind: 'error', code: 'ECONNRESET' });
  t.ok(seen <= 2, `${seen} requests seen`);
  t.equal(r.answered(), 0);
});

t.test("the receiver's Keep-Alive: timeout= hint is respected", async (t) => {
  // undici keeps a connection for the hint minus 2 s: timeout=3 → 1 s, timeout=1 → not at all.
  const three = await startRawTlsReceiver(t, pki.valid, () => 'HTTP/1.1 200 OK\r\nKeep-Alive: timeout=3\r\nContent-Length: 0\r\n\r\n');
  const d = dispatcher(t);
  t.match(await post(d, three.url), { kind: 'response', status: 200 });
  await sleep(300);
  t.match(await post(d, three.url), { kind: 'response', status: 200 });
  t.equal(three.connections(), 1, 'reused within the hint');
  await sleep(1_500);
  t.match(await post(d, three.url), { kind: 'response', status: 200 });
  t.equal(three.connections(), 2, 'not reused once older than the hint allows, though the receiver kept it open');

  const one = await startRawTlsReceiver(t, pki.valid, () => 'HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\nContent-Length: 0\r\n\r\n');
  for (let i = 0; i < 3; i++) t.match(await post(d, one.url), { kind: 'response', status: 200 });
  t.equal(one.connections(), 3, 'timeout=1 is too short to reuse safely');
});

t.test('the SSRF guard applies to https: targets, by address and by name', async (t) => {
  const r = await startHttpsReceiver(t, pki.valid);
  const d = dispatcher(t, { guard: new SsrfGuard([]) });
  t.match(await post(d, r.url), { kind: 'error', code: 'ESSRF' });
  t.match(await post(d, `https://localhost:${r.port}/`), { kind: 'error', code: 'ESSRF', error: /refused address .* for localhost/ });
  t.match(await post(d, `https://[::ffff:127.0.0.1]:${r.port}/`), { kind: 'error', code: 'ESSRF' });
  t.equal(r.connections(), 0, 'no connection was even opened');
});

t.test('https: one deadline, no redirects, at most maxResponseBytes, URL credentials sent as Basic', async (t) => {
  const silent = await startRawTlsReceiver(t, pki.valid, () => '');
  const timedOut = await post(dispatcher(t), silent.url, 300);
  t.match(timedOut, { kind: 'error', code: 'ETIMEDOUT' });
  t.ok(timedOut.durationMs < 600);

  let auth: string | undefined;
  const r = await startHttpsReceiver(t, pki.valid, (_body, res) => {
    res.writeHead(307, { location: '/elsewhere' });
    res.end(Buffer.alloc(100_000, 'y'));
  });
  r.server.on('request', (req) => (auth = req.headers.authorization));
  const small = dispatcher(t, { maxResponseBytes: 1024 });
  const res = await post(small, `https://us%20er:p%40ss@127.0.0.1:${r.port}/x?y=1`);
  t.match(res, { kind: 'response', status: 307, headers: { location: '/elsewhere' } });
  t.equal(res.kind === 'response' ? res.body.length : -1, 1024);
  t.equal(r.bodies.length, 1, 'the redirect was not followed');
  t.equal(auth, `Basic ${Buffer.from('us er:p@ss').toString('base64')}`);
  t.match(await post(small, r.url, 2000, { 'x-bad': 'a\nb' }), { kind: 'error' }, 'a header undici refuses is an attempt error');
});

t.test('delivery.tls.caFile that cannot be read stops the boot', async (t) => {
  t.throws(() => loadTlsTrust('/nonexistent/ca.pem'), /delivery\.tls\.caFile: cannot read/);
  t.same(loadTlsTrust(''), {});
  t.equal(loadConfig({}).delivery.tls.caFile, '', 'none by default');
  t.equal(loadConfig({ STREAMGATE_DELIVERY_CA_FILE: pki.caFile }).delivery.tls.caFile, pki.caFile, 'env STREAMGATE_DELIVERY_CA_FILE');
});

t.test('https: the request head as undici writes it: Host and Connection first, lower case; content-length last', async (t) => {
  // http: (Http1Pool) writes node:http's order instead: see http-dispatcher.test.ts.
  const seen: Array<{ url: string | undefined; raw: string[] }> = [];
  const r = await startHttpsReceiver(t, pki.valid);
  r.server.on('request', (req) => seen.push({ url: req.url, raw: req.rawHeaders }));
  const d = dispatcher(t);
  const url = new URL(`https://us%20er:p%40ss@127.0.0.1:${r.port}/a/b%20c?x=1&y=%2F`);
  for (let i = 0; i < 2; i++) {
    t.match(await d.send({ url, headers: { 'x-one': '1', 'content-type': 'application/json' }, body, timeoutMs: 2000 }), { kind: 'response', status: 200 });
  }
  const expected = ['host', `127.0.0.1:${r.port}`, 'connection', 'keep-alive', 'x-one', '1', 'content-type', 'application/json',
    'authorization', `Basic ${Buffer.from('us er:p@ss').toString('base64')}`, 'content-length', String(body.length)];
  t.equal(seen.length, 2);
  for (const s of seen) {
    t.equal(s.url, '/a/b%20c?x=1&y=%2F');
    t.same(s.raw, expected);
  }
});

t.test('https: HTTP/1.1 even when the receiver offers h2 (undici 8 would negotiate it by default)', async (t) => {
  const versions: string[] = [];
  const server = createSecureServer({ key: pki.valid.key, cert: pki.valid.cert, allowHTTP1: true }, (req, res) => {
    versions.push(req.httpVersion);
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const d = dispatcher(t);
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
  for (let i = 0; i < 2; i++) t.match(await post(d, url), { kind: 'response', status: 200 });
  t.same(versions, ['1.1', '1.1']);
});

t.test('https: response headers as node:http gives them (set-cookie a list, other repeats joined)', async (t) => {
  const r = await startRawTlsReceiver(t, pki.valid, () =>
    'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX-Rep: 1\r\nX-Rep: 2\r\nX-One: v\r\nContent-Length: 2\r\n\r\nok');
  const res = await post(dispatcher(t), r.url);
  t.match(res, { kind: 'response', status: 200 });
  if (res.kind !== 'response') return;
  t.same(res.headers['set-cookie'], ['a=1']);
  t.equal(res.headers['x-rep'], '1, 2');
  t.equal(res.headers['x-one'], 'v');
  t.equal(res.body.toString(), 'ok');
});
