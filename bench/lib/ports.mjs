import { createServer } from 'node:net';

/**
 * A port that was free a moment ago. streamgate takes its port from PORT and
 * does not report which one it bound, so the bench picks one up front; the
 * race with another process grabbing it in between is acceptable for a bench.
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
