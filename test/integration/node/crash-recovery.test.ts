import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, freePort, spawnNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';

// The promise of a 202: whatever happens to the process afterwards, the event
// reaches the receiver. Kill -9 mid-stream, restart, and count.
t.test('SIGKILL with 1000 accepted events in flight loses none of them', async (t) => {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const receiver = await startReceiver(t);
  // A receiver that takes a moment per request keeps deliveries in flight at the kill.
  receiver.responder = (_req, res) => setTimeout(() => res.end('ok'), 20);
  const port = await freePort();
  const first = await spawnNode(t, backends, port);
  const api = clientFor(port, creds);
  await api.wire('crash', 'crash-target', `${receiver.url}/crash`);

  const accepted = new Set<string>();
  let refused = 0;
  let sent = 0;
  let deliveredAtKill = -1;
  let killed: Promise<void> | null = null;
  // Posting goes on through the kill, so requests are also cut mid-ingress.
  const worker = async () => {
    while (sent < 1500) {
      const i = sent++;
      if (accepted.size >= 1000 && !killed) {
        deliveredAtKill = new Set(receiver.eventIds()).size;
        killed = first.kill('SIGKILL');
      }
      try {
        const res = await api.postEvent('crash', JSON.stringify({ i }), { 'x-service-partition-key': `k${i % 37}` });
        if (res.status === 202) accepted.add(res.body.eventId);
        else refused++;
      } catch {
        refused++; // connection died with the process: not accepted, not promised
      }
    }
  };
  await Promise.all(Array.from({ length: 40 }, worker));
  await killed;
  t.ok(accepted.size >= 1000, `accepted before the kill: ${accepted.size}`);
  t.ok(deliveredAtKill < 1000, `only ${deliveredAtKill} were delivered when the process died: the rest were in flight`);
  t.ok(refused > 0, `requests failed after the kill: ${refused}`);

  await spawnNode(t, backends, port);
  await receiver.waitFor(
    (requests) => {
      const seen = new Set(requests.map((r) => String(r.headers['x-service-event-id'])));
      for (const id of accepted) if (!seen.has(id)) return false;
      return true;
    },
    90_000,
    `all ${accepted.size} accepted events`,
  );
  const delivered = new Set(receiver.eventIds());
  const missing = [...accepted].filter((id) => !delivered.has(id));
  t.same(missing, [], 'every event answered 202 was delivered');
  t.comment(`accepted ${accepted.size}, deliveries ${receiver.requests.length} (duplicates ${receiver.requests.length - delivered.size})`);
});
