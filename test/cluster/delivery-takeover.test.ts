import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { freshBackends, TEST_BACKEND } from '../helpers/backends.js';
import { bootstrapDatabase, clientFor, freePort, spawnNode } from '../helpers/nodes.js';
import { startReceiver } from '../helpers/receiver.js';
import { groupMembers, topicBounds } from '../helpers/read-topic.js';
import { sleep } from '../helpers/delivery.js';

/**
 * A delivery node that dies hands its partitions over without waiting for the
 * Kafka session timeout: the survivors see its liveness mark in Redis expire
 * and remove it from the consumer group (src/event-log/kafka/group-liveness.ts). The
 * session timeout is set to 60 s here, so events of the dead node's
 * partitions delivered within 20 s can only be the liveness path's doing.
 */
if (TEST_BACKEND !== 'kafka') {
  t.pass('consumer groups are a Kafka matter: nothing to check on the embedded log');
} else {
  t.test('SIGKILL of one of two delivery nodes: its partitions deliver again long before the session timeout', async (t) => {
    const backends = await freshBackends(t);
    const creds = await bootstrapDatabase(backends.databaseUrl);
    const dir = mkdtempSync(join(tmpdir(), 'sg-takeover-'));
    const configFile = join(dir, 'streamgate.yaml');
    writeFileSync(configFile, 'kafka:\n  sessionTimeoutMs: 60000\n  heartbeatIntervalMs: 1000\ndelivery:\n  commitIntervalMs: 100\n');
    const env = { STREAMGATE_CONFIG: configFile };
    const receiver = await startReceiver(t);

    const portA = await freePort();
    const nodeA = await spawnNode(t, backends, portA, env);
    const api = clientFor(portA, creds);
    await api.wire('takeover', 'takeover-target', `${receiver.url}/in`);
    const nodeB = await spawnNode(t, backends, await freePort(), env);

    // Both members hold partitions before the kill.
    let members = new Map<string, number[]>();
    for (let i = 0; i < 300; i++) {
      members = await groupMembers(backends.groupId, backends.topic).catch(() => new Map());
      if (members.size === 2 && [...members.values()].every((p) => p.length > 0)) break;
      await sleep(100);
    }
    const all = [...Array((await topicBounds(backends.topic)).length).keys()];
    const sorted = (list: number[]) => [...list].sort((a, b) => a - b);
    t.equal(members.size, 2, 'two delivery nodes in the group');
    t.same(sorted([...members.values()].flat()), all, 'every partition assigned to one of them');
    // Marks are renewed every 0.4 s; give both a round to be seen by the other.
    await sleep(1500);

    await nodeB.kill('SIGKILL');
    const keys = Array.from({ length: 24 }, (_, i) => `key-${i}`);
    const ids: string[] = [];
    for (const key of keys) {
      const res = await api.postEvent('takeover', JSON.stringify({ key }), { 'x-service-partition-key': key });
      t.equal(res.status, 202);
      ids.push(res.body.eventId);
    }
    const killedAt = Date.now();
    await receiver.waitFor((r) => ids.every((id) => r.some((x) => x.headers['x-service-event-id'] === id)), 20_000, 'every event, the dead node\'s partitions included');
    t.comment(`every event delivered ${Date.now() - killedAt} ms after the kill (session timeout 60 000 ms)`);
    const after = await groupMembers(backends.groupId, backends.topic);
    t.equal(after.size, 1, 'the dead node is no longer a member');
    t.same(sorted([...after.values()][0] ?? []), all, 'the survivor holds every partition');
    await nodeA.kill('SIGTERM');
  });
}
