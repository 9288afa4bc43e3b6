import t from 'tap';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { countRecords } from '../../helpers/topic.js';
import { rawRequest } from '../../helpers/raw-http.js';

/**
 * Body limits and the PROXY protocol on a whole node: accepted events are
 * written, refusals carry the reference's code, a too-large body's 413
 * reaches the client whole (however the body is framed), and a PROXY header
 * names the client only when a trusted balancer sends it.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends, { server: { port: 0, host: '127.0.0.1' } });
const api = clientFor(node.port, creds);

t.test('an API-key event is accepted and written; a bad key is refused and writes nothing', async (t) => {
  await api.manage('PUT', api.tenantPath('/queues/plain'), {});
  const before = await countRecords(backends);
  const ok = await api.postEvent('plain', JSON.stringify({ a: 1 }));
  t.equal(ok.status, 202, JSON.stringify(ok.body));
  t.match(ok.body.eventId, /^evt_/);
  const bad = await api.request('POST', `/events/${creds.tenantPublicId}/plain`, { raw: '{}', headers: { 'content-type': 'application/json', 'x-api-key': 'sk_wrong' } });
  t.equal(bad.status, 401);
  t.equal(bad.body.error.code, 'invalid_api_key');
  t.equal(await countRecords(backends), before + 1, 'only the accepted event was written');
});

t.test('an event body over the limit is 413 payload_too_large, answered whole', async (t) => {
  const before = await countRecords(backends);
  for (let i = 0; i < 5; i++) {
    const over = await api.postEvent('plain', randomBytes(1_048_577), { 'content-type': 'application/octet-stream' });
    t.equal(over.status, 413);
    t.equal(over.body?.error?.code, 'payload_too_large');
  }
  t.equal(await countRecords(backends), before, 'nothing written');
});

t.test('a management body over the limit is 413 payload_too_large, answered whole, asking the client to close', async (t) => {
  for (let i = 0; i < 5; i++) {
    const res = await api.manage('PUT', api.tenantPath('/queues/too-big'), { note: 'n'.repeat(300_000) });
    t.equal(res.status, 413);
    t.equal(res.body?.error?.code, 'payload_too_large');
    t.equal(res.headers.get('connection'), 'close');
  }
  t.equal((await api.manage('GET', api.tenantPath('/queues/too-big'))).status, 404, 'nothing saved');
});

/** Sends `total` bytes chunked (no Content-Length) in 64 KiB writes; resolves with the answer, or the error that ended it. */
function postChunked(port: number, path: string, headers: Record<string, string>, total: number): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
    const piece = Buffer.alloc(65_536, 'x');
    let sent = 0;
    const pump = () => {
      while (sent < total) {
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

{
  const port = node.port;
  t.test('a chunked body that grows over the limit is 413 payload_too_large, answered whole', async (t) => {
    const before = await countRecords(backends);
    for (let i = 0; i < 5; i++) {
      const res = await postChunked(port, `/events/${creds.tenantPublicId}/plain`, { 'x-api-key': creds.ingressKey, 'content-type': 'application/octet-stream' }, 4 * 1_048_576);
      t.same('status' in res ? [res.status, JSON.parse(res.body).error.code] : res, [413, 'payload_too_large'], `attempt ${i + 1}`);
    }
    t.equal(await countRecords(backends), before, 'nothing written');
  });
}

t.test('a PROXY header names the client only when it comes from server.proxyProtocolFrom', async (t) => {
  const net = await import('node:net');
  await api.manage('PUT', api.tenantPath('/queues/allow-doc'), { ipAllowlist: ['203.0.113.0/24'] });
  const trusting = await startTestNode(t, backends, { server: { port: 0, host: '127.0.0.1', proxyProtocolFrom: ['127.0.0.1/32'] } });
  // PROXY v2, TCP over IPv4, naming 203.0.113.7:12345 → 127.0.0.1:80.
  const proxy = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0x00, 0x0c, 203, 0, 113, 7, 127, 0, 0, 1, 0x30, 0x39, 0x00, 0x50]);
  const post = Buffer.from(`POST /events/${creds.tenantPublicId}/allow-doc HTTP/1.1\r\nhost: x\r\nx-api-key: ${creds.ingressKey}\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}`);
  const status = (port: number) =>
    new Promise<number | null>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.concat([proxy, post])));
      let out = '';
      socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
      socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1]) || null));
      socket.on('error', () => {});
      setTimeout(() => socket.destroy(), 3_000);
    });
  t.equal(await status(node.port), 400, 'untrusted peer: its PROXY header is refused as a malformed request');
  t.equal(await status(trusting.port), 202, 'a peer in proxyProtocolFrom: the allowlist sees the address its PROXY header names');
  const bare = await rawRequest(trusting.port, post);
  t.equal(bare.status, 400, 'a peer in proxyProtocolFrom must open with a PROXY header: a bare request is refused');
});
