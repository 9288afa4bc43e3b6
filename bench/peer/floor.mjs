/**
 * The floor of bench/peer-ab.mjs: the least a one-thread Node relay can do per
 * event on this box. Not a product: no queue, no log, no retry, no order; it
 * proxies. node:http takes the event, checks the key, proves the body is JSON,
 * POSTs it signed to the receiver over a keep-alive undici Pool and answers
 * 202 once the receiver said 2xx (502 otherwise).
 *
 *   POST /events/:queue ──► node:http ──undici──► receiver ──► 202
 *
 * Per event it pays the four loopback socket operations every relay pays (the
 * request in, the delivery out, its answer in, the 202 out), an HMAC and two
 * HTTP parses, and nothing for durability. Its delivered ev/s is a ceiling for
 * any single-threaded Node relay here, streamgate at one thread included: a
 * target above it is bounded by the box, not by the design.
 *
 * Environment: PEER_PORT, PEER_API_KEY, PEER_SIGNING_SECRET, PEER_TARGET_URL,
 * PEER_CONCURRENCY (connections to the receiver, default 50), as relay.mjs.
 * IPC (when forked): -> { type: 'ready', port, pids }. GET /stats -> { accepted }.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { Pool } from 'undici';

const env = process.env;
const required = (name) => {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const keyDigest = createHash('sha256').update(required('PEER_API_KEY')).digest();
const secret = required('PEER_SIGNING_SECRET');
const target = new URL(required('PEER_TARGET_URL'));
const targetPath = `${target.pathname}${target.search}`;
const pool = new Pool(target.origin, { connections: Number(env.PEER_CONCURRENCY ?? 50), keepAliveTimeout: 30_000 });
let accepted = 0;

const answer = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

async function relay(req, res, body) {
  const eventId = randomUUID();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', secret).update(`${eventId}.${timestamp}.`).update(body).digest('hex');
  const key = req.headers['x-service-partition-key'];
  const sent = await pool.request({
    method: 'POST',
    path: targetPath,
    headers: {
      'content-type': 'application/json',
      'x-service-event-id': eventId,
      'x-service-timestamp': timestamp,
      'x-service-signature': `v1=${signature}`,
      'x-service-attempt': '1',
      ...(typeof key === 'string' ? { 'x-service-partition-key': key } : {}),
    },
    body,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  await sent.body.dump();
  if (sent.statusCode < 200 || sent.statusCode >= 300) return answer(res, 502, '{"code":"receiver_refused"}');
  accepted++;
  answer(res, 202, `{"eventId":"${eventId}"}`);
}

const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  if (req.method === 'GET' && req.url === '/stats') return answer(res, 200, JSON.stringify({ accepted }));
  const given = req.headers['x-api-key'];
  if (typeof given !== 'string' || !timingSafeEqual(createHash('sha256').update(given).digest(), keyDigest)) {
    req.resume();
    return answer(res, 401, '{"code":"unauthorized"}');
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    try {
      JSON.parse(body.toString('utf8'));
    } catch {
      return answer(res, 400, '{"code":"invalid_json"}');
    }
    relay(req, res, body).catch(() => answer(res, 502, '{"code":"receiver_unreachable"}'));
  });
});

server.listen(Number(env.PEER_PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  if (process.send) process.send({ type: 'ready', port, pids: [process.pid] });
  else console.log(`floor relay on http://127.0.0.1:${port}`);
});

const stop = async () => {
  server.close();
  await pool.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.once('disconnect', stop);
