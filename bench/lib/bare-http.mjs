/**
 * The HTTP servers of the bare baselines (bare-server.mjs, bare-kafka-server.mjs),
 * by `kind` (their first argument):
 *
 *   node-http  node:http (llhttp): the best maintained HTTP/1.1 server for
 *              Node, the floor a Node HTTP server reaches (the baselines' role
 *              in the reports)
 *   own        streamgate's own server (dist/http/server.js: the strict parser,
 *              the connection's ordering and deadlines) with a trivial dispatch
 *              in place of the router: our parser against node:http at the floor
 *
 * `handle(partitionKey, body)` returns the 202's JSON body (a string), or a
 * promise of it; a rejected promise answers 503. Both read the whole body
 * before calling it, as streamgate must. `own` loads dist/ from BENCH_DIST when
 * set (a build kept aside), else this tree's. Listens on 127.0.0.1 (a free port) and
 * resolves with the port.
 */
import http from 'node:http';
import { pathToFileURL } from 'node:url';

export const KINDS = ['node-http', 'own'];
const JSON_TYPE = 'application/json';

export async function serveBare(kind = 'node-http', handle) {
  if (!KINDS.includes(kind)) throw new Error(`kind must be one of ${KINDS.join(', ')}, not ${kind}`);
  return kind === 'own' ? serveOwn(handle) : serveNodeHttp(handle);
}

function serveNodeHttp(handle) {
  const server = http.createServer({ noDelay: true, maxHeaderSize: 16_384 }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(404, { 'content-length': '0' }).end();
        return;
      }
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const reply = (text) => res.writeHead(202, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) }).end(text);
      const answer = handle(req.headers['x-service-partition-key'] ?? null, body);
      if (typeof answer === 'string') reply(answer);
      else answer.then(reply, () => res.writeHead(503, { 'content-length': '0' }).end());
    });
  });
  // As streamgate's idle timeout (server.idleTimeoutMs); node:http's default is 5 s.
  server.keepAliveTimeout = 10_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

async function serveOwn(handle) {
  // BENCH_DIST: another dist/ (e.g. one kept aside with keep-build.sh), as the streamgate nodes of the run.
  const dist = process.env.BENCH_DIST ? pathToFileURL(`${process.env.BENCH_DIST}/`) : new URL('../../dist/', import.meta.url);
  const { HttpServer } = await import(new URL('http/server.js', dist));
  const { responseHead } = await import(new URL('http/response-head.js', dist));
  const headers = { 'content-type': JSON_TYPE };
  const reply = (connection, close, text) => connection.answer(responseHead(202, 'req_bare', headers, Buffer.byteLength(text), close), text, close);
  const server = new HttpServer({
    // streamgate's defaults (config/default.yaml server.*)
    bodyLimits: { events: 1_048_576, other: 1_048_576 },
    headTimeoutMs: 10_000,
    bodyTimeoutMs: 30_000,
    idleTimeoutMs: 10_000,
    proxyProtocolFrom: [],
    dispatch(connection, head, body) {
      if (head.method !== 'POST') {
        connection.answer(responseHead(404, 'req_bare', undefined, 0, head.close), null, head.close);
        return;
      }
      const answer = handle(head.headers['x-service-partition-key'] ?? null, body);
      if (typeof answer === 'string') reply(connection, head.close, answer);
      else answer.then((text) => reply(connection, head.close, text), () => connection.answer(responseHead(503, 'req_bare', undefined, 0, true), null, true));
    },
  });
  return server.listen('127.0.0.1', 0);
}
