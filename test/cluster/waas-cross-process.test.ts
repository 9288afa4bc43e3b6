import t, { type Test } from 'tap';
import { freshBackends } from '../helpers/backends.js';
import { bootstrapDatabase, clientFor, freePort, spawnNode, startTestNode } from '../helpers/nodes.js';
import { startReceiver } from '../helpers/receiver.js';
import { arrives, received, Waas } from '../helpers/waas.js';

// Cache invalidation across processes. This process runs management and
// ingress only; a child process (the built CLI, `npm run build` first) runs
// every role and is the only one delivering. Every write goes through this
// process; the child must act on it for every event accepted after the
// write's answer, although its gate view was warm (cached as open) before.
t.test('a block, an un-block, a revoke and an activation written through one process take effect in the other at once', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const local = await startTestNode(t, backends, { roles: ['management', 'ingress'] });
  // spawnNode passes this cluster's Redis key prefix: the child hears its invalidations.
  // Two threads in the child (docs/threads.md): every write must reach both, each
  // delivering the partitions it owns, as it reaches another process.
  const child = await spawnNode(t, backends, await freePort(), { STREAMGATE_THREADS: '2' });
  const waas = new Waas(clientFor(local.port, creds));
  const receiver = await startReceiver(t);

  const orders = await waas.putStream('orders');
  const control = await waas.putStream('control');
  const partner = await waas.newPartner('x@partner.test');
  await waas.subscribe(partner, orders.publicId);
  await waas.subscribe(partner, control.publicId);
  await waas.partnerTarget(partner, 'orders', 'hook', `${receiver.url}/hook`);
  await waas.partnerTarget(partner, 'control', 'hook', `${receiver.url}/hook`);
  await waas.activate(partner, 'ctl');
  await waas.activate(partner, 'g');

  let lane = 0;
  const nextLane = () => `lane-${++lane}`;
  const notDelivered = async (t: Test, eventId: string, pk: string, what: string) => {
    const marker = await waas.post('control', 'ctl', pk);
    await arrives(receiver, marker, `the marker after ${what}`, 60_000);
    t.notOk(received(receiver, eventId), what);
  };

  // Warm the child's view: the stream is open for group key g.
  for (let i = 0; i < 3; i++) await arrives(receiver, await waas.post('orders', 'g', nextLane()), 'a warm-up event', 60_000);
  t.equal(child.child.exitCode, null, 'the child delivers');

  await waas.block(partner, 'streams', orders.publicId);
  let pk = nextLane();
  await notDelivered(t, await waas.post('orders', 'g', pk), pk, 'blocked in this process: the child does not deliver');

  await waas.unblock(partner, 'streams', orders.publicId);
  await arrives(receiver, await waas.post('orders', 'g', nextLane()), 'un-blocked in this process: the child delivers again', 60_000);

  await waas.revoke(partner, 'g');
  pk = nextLane();
  await notDelivered(t, await waas.post('orders', 'g', pk), pk, 'revoked in this process: the child does not deliver');

  await waas.activate(partner, 'g');
  await arrives(receiver, await waas.post('orders', 'g', nextLane()), 'activated again: the child delivers', 60_000);

  const pkg = await waas.createPackage('All');
  await waas.addToPackage(pkg.publicId, orders.publicId);
  await waas.block(partner, 'packages', pkg.publicId);
  pk = nextLane();
  await notDelivered(t, await waas.post('orders', 'g', pk), pk, 'package blocked in this process: the child does not deliver');
  t.pass(`the child (pid ${child.child.pid}) followed every write`);
});
