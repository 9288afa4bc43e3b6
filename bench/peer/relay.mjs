/**
 * The peer of bench/peer-ab.mjs: the relay a Node team would write instead of
 * running streamgate. fastify takes the events, BullMQ keeps them in Redis,
 * a BullMQ Worker POSTs each to the receiver with undici and BullMQ retries
 * failures (attempts + exponential backoff).
 *
 *   POST /events/:queue ──► fastify ──► BullMQ (Redis) ──► Worker ──undici──► receiver
 *
 * What it guarantees, next to streamgate:
 * - 202 once Redis has the job (BullMQ's add resolves on Redis's reply; Redis
 *   fsyncs per its own appendonly/appendfsync settings, which this relay does not set).
 * - At-least-once delivery, retried PEER_ATTEMPTS times, then kept as failed.
 * - NO order per partition key: open-source BullMQ has no per-key ordering
 *   (BullMQ Pro "groups" do); with concurrency > 1 jobs of one key overlap.
 *   The key is carried to the receiver as a header only.
 *
 * Environment:
 *   PEER_PORT            port (0: any; the chosen one is sent over IPC and printed)
 *   REDIS_URL            redis://127.0.0.1:6379 by default
 *   PEER_PREFIX          BullMQ key prefix (a unique one per run on a shared Redis)
 *   PEER_QUEUES          comma-separated queue names served (default "bench"); others get 404
 *   PEER_API_KEY         the ingress key callers send in x-api-key (required)
 *   PEER_SIGNING_SECRET  HMAC-SHA256 secret of the delivery signature (required)
 *   PEER_TARGET_URL      where every job is POSTed (required)
 *   PEER_CONCURRENCY     jobs in flight per worker process (default 50)
 *   PEER_WORKERS         worker processes; 0 (default) = one Worker inside the HTTP process
 *   PEER_ATTEMPTS        delivery attempts per job (default 10)
 *   PEER_BACKOFF_MS      first retry delay, doubled each attempt (default 1000)
 *
 * IPC (when forked): -> { type: 'ready', port, pids } with the pids of every
 * process of the relay (this one and its worker processes).
 * GET /stats -> { accepted } (jobs enqueued by this process), for the bench's drain wait.
 */
import { fork } from 'node:child_process';
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { Queue, Worker } from 'bullmq';
import { Pool } from 'undici';

const env = process.env;
const required = (name) => {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const redisUrl = new URL(env.REDIS_URL ?? 'redis://127.0.0.1:6379');
// maxRetriesPerRequest null: BullMQ Workers require it (blocking commands must not time out).
const connection = { host: redisUrl.hostname, port: Number(redisUrl.port || 6379), db: Number(redisUrl.pathname.slice(1) || 0), maxRetriesPerRequest: null };
const prefix = env.PEER_PREFIX ?? 'peerbench';
const queueNames = (env.PEER_QUEUES ?? 'bench').split(',').map((s) => s.trim()).filter(Boolean);
const concurrency = Number(env.PEER_CONCURRENCY ?? 50);
const workerProcesses = Number(env.PEER_WORKERS ?? 0);
const attempts = Number(env.PEER_ATTEMPTS ?? 10);
const backoffMs = Number(env.PEER_BACKOFF_MS ?? 1000);

if (process.argv[2] === 'worker') await runWorkers();
else await runServer();

/** The HTTP side: validate, enqueue, 202. */
async function runServer() {
  // The key is compared as a digest: equal lengths for timingSafeEqual, no early exit on the first differing byte.
  const keyDigest = createHash('sha256').update(required('PEER_API_KEY')).digest();
  const queues = new Map(queueNames.map((name) => [name, new Queue(name, { connection, prefix })]));
  let accepted = 0;

  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  // The body is kept as the caller sent it (the receiver gets the exact bytes, as from streamgate);
  // parsing it only proves it is JSON.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      JSON.parse(body);
      done(null, body);
    } catch {
      done(Object.assign(new Error('body is not JSON'), { statusCode: 400 }));
    }
  });
  app.post('/events/:queue', async (req, reply) => {
    const given = req.headers['x-api-key'];
    if (typeof given !== 'string' || !timingSafeEqual(createHash('sha256').update(given).digest(), keyDigest)) {
      return reply.code(401).send({ code: 'unauthorized' });
    }
    const queue = queues.get(req.params.queue);
    if (!queue) return reply.code(404).send({ code: 'queue_not_found' });
    if (typeof req.body !== 'string') return reply.code(415).send({ code: 'unsupported_media_type' });
    const key = req.headers['x-service-partition-key'];
    const eventId = randomUUID();
    await queue.add('event', { eventId, body: req.body, key: typeof key === 'string' ? key : null, receivedAt: Date.now() }, {
      attempts,
      backoff: { type: 'exponential', delay: backoffMs },
      // Completed jobs are dropped at once (the cheapest setting for the peer); failed ones are kept for inspection.
      removeOnComplete: true,
      removeOnFail: 10_000,
    });
    accepted++;
    return reply.code(202).send({ eventId });
  });
  app.get('/stats', async () => ({ accepted }));

  const children = [];
  for (let i = 0; i < workerProcesses; i++) children.push(fork(fileURLToPath(import.meta.url), ['worker'], { stdio: 'inherit' }));
  const closeWorkers = workerProcesses === 0 ? await runWorkers({ standalone: false }) : null;

  await app.listen({ port: Number(env.PEER_PORT ?? 0), host: '127.0.0.1' });
  const port = app.server.address().port;
  const pids = [process.pid, ...children.map((c) => c.pid)];
  if (process.send) process.send({ type: 'ready', port, pids });
  else console.log(`peer relay on http://127.0.0.1:${port} (pids ${pids.join(', ')})`);

  const stop = async () => {
    await app.close();
    for (const child of children) child.kill('SIGTERM');
    await closeWorkers?.();
    await Promise.all([...queues.values()].map((q) => q.close()));
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('disconnect', stop);
}

/**
 * One BullMQ Worker per queue, `concurrency` jobs at a time each, POSTing to
 * the target over a keep-alive undici Pool with an HMAC signature. Returns close().
 */
async function runWorkers({ standalone = true } = {}) {
  const target = new URL(required('PEER_TARGET_URL'));
  const secret = required('PEER_SIGNING_SECRET');
  const pool = new Pool(target.origin, { connections: concurrency, keepAliveTimeout: 30_000 });
  const path = `${target.pathname}${target.search}`;

  const deliver = async (job) => {
    const { eventId, body, key } = job.data;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac('sha256', secret).update(`${eventId}.${timestamp}.`).update(body).digest('hex');
    const res = await pool.request({
      method: 'POST',
      path,
      headers: {
        'content-type': 'application/json',
        'x-service-event-id': eventId,
        'x-service-timestamp': timestamp,
        'x-service-signature': `v1=${signature}`,
        'x-service-attempt': String(job.attemptsMade + 1),
        ...(key ? { 'x-service-partition-key': key } : {}),
      },
      body,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    await res.body.dump();
    // Anything but 2xx is a failure BullMQ retries with its backoff.
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
  };

  const workers = queueNames.map((name) => new Worker(name, deliver, { connection, prefix, concurrency }));
  for (const w of workers) w.on('error', (err) => console.error(`peer worker: ${err.message}`));
  const close = async () => {
    await Promise.all(workers.map((w) => w.close()));
    await pool.close();
  };
  if (standalone) {
    const stop = async () => {
      await close();
      process.exit(0);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    // A worker process forked by the HTTP process ends with it.
    process.once('disconnect', stop);
  }
  return close;
}
