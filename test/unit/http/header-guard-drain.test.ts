import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { HeaderGuard } from '../../../src/http/header-guard.js';

/**
 * The header guard's drain against a stand-in for uWS on a Unix socket: it
 * skips the PROXY v2 header the guard sends first and answers each request
 * head with 200 (keep-alive).
 */
async function standInUpstream(path: string): Promise<() => Promise<void>> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffer = Buffer.alloc(0);
    let preambleDone = false;
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!preambleDone) {
        if (buffer.length < 16) return;
        const length = 16 + buffer.readUInt16BE(14);
        if (buffer.length < length) return;
        buffer = buffer.subarray(length);
        preambleDone = true;
      }
      for (let end = buffer.indexOf('\r\n\r\n'); end !== -1; end = buffer.indexOf('\r\n\r\n')) {
        buffer = buffer.subarray(end + 4);
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

/** One GET on the kept-alive socket: the status line, or why the connection ended first. */
function get(socket: Socket): Promise<string> {
  // Ended already (the server's FIN came while the client was between requests): the request is cut off.
  if (socket.readableEnded || socket.destroyed) return Promise.resolve('ended');
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\nok')) finish(text.split('\r\n')[0]!);
    };
    const onEnd = () => finish('ended');
    const finish = (result: string) => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      resolve(result);
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.write('GET /v1/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

t.test('a drain does not close a connection a client used moments ago, though the guard\'s coarse clock is stale', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sg-guard-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const upstreamPath = join(dir, 'uws.sock');
  const closeUpstream = await standInUpstream(upstreamPath);
  t.teardown(closeUpstream);
  // The guard's clock is set now and next advanced by its sweep, a second after the first connection.
  const guard = new HeaderGuard({ host: '127.0.0.1', port: 0, upstreamPath, maxHeadBytes: 16_384, bodyLimits: { events: 1 << 20, other: 1 << 20 } });
  const port = await guard.listen();
  t.teardown(() => {
    guard.close();
    guard.destroyAll();
  });
  // 700 ms later the first connection's traffic is still stamped with the construction time.
  await new Promise((r) => setTimeout(r, 700));
  const client = connect({ host: '127.0.0.1', port });
  await new Promise((r) => client.once('connect', r));
  t.teardown(() => client.destroy());
  t.equal(await get(client), 'HTTP/1.1 200 OK', 'first request answered');

  guard.close();
  let drainedAt = 0;
  const began = Date.now();
  guard.drain(500, () => (drainedAt = Date.now()));
  // The client goes on using its connection a moment later, as a busy sender does.
  await new Promise((r) => setTimeout(r, 30));
  t.equal(await get(client), 'HTTP/1.1 200 OK', 'the next request on it is answered, not cut off');
  t.equal(drainedAt, 0, 'the drain waits for it');
  // Left idle, it is closed after the drain's idle time and the drain completes.
  await new Promise<void>((resolve) => client.once('close', () => resolve()));
  await new Promise((r) => setTimeout(r, 50));
  t.ok(drainedAt > 0, 'the drain completed once the connection sat idle');
  t.ok(drainedAt - began >= 500, `closed after ${drainedAt - began} ms idle, not before 500`);
});
