import uWS from 'uWebSockets.js';
import type { PublicListener } from '../http/listen.js';
import type { ThreadListen } from './thread-messages.js';

/**
 * Opens a node thread's side of the shared HTTP port (see ThreadListen).
 * Either way the thread's uWS app is the only one it listens with, so a
 * thread that fails can close it before it exits (src/threads/node-thread.ts).
 */
export function listenThread(app: uWS.TemplatedApp, spec: ThreadListen): Promise<PublicListener> {
  return new Promise((resolve, reject) => {
    const done = (token: uWS.us_listen_socket | false) => {
      if (!token) {
        reject(new Error(spec.kind === 'unix' ? `cannot listen on ${spec.path}` : `cannot listen on ${spec.host}:${spec.port}`));
        return;
      }
      resolve({
        port: spec.kind === 'unix' ? spec.publicPort : spec.port,
        close: () => uWS.us_listen_socket_close(token),
        // Behind the guard, the main thread's guard waits for the public connections.
        drainConnections: async () => {},
        destroyConnections: () => {},
      });
    };
    // uSockets sets SO_REUSEPORT on Linux: every thread binds the same port and the kernel
    // spreads new connections over them (bench/threads-accept.mjs measures it).
    if (spec.kind === 'unix') app.listen_unix(done, spec.path);
    else app.listen(spec.host, spec.port, done);
  });
}
