import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { waitForEvent } from '../../helpers/delivery.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { makeTestPki, startHttpsReceiver } from '../../helpers/tls-receiver.js';

// A node trusting a throwaway test CA through delivery.tls.caFile; receivers
// with certificates it does or does not vouch for.
const pki = makeTestPki(t);
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
// `extra` replaces whole sections: the test delivery settings, plus the CA.
const node = await startTestNode(t, backends, {
  delivery: {
    allowNetworks: ['127.0.0.0/8'],
    allowLoopbackInSingleNode: false,
    commitIntervalMs: 50,
    retry: { scheduleSeconds: [1], horizonSeconds: 3600, holdInMemoryMs: 1000 },
    tls: { caFile: pki.caFile },
  },
});
const api = clientFor(node.port, creds);

t.test('an https: receiver whose certificate chains to the configured CA gets its events, over one kept-alive connection', async (t) => {
  const receiver = await startHttpsReceiver(t, pki.valid);
  await api.wire('tls-ok', 'tls-ok-target', `${receiver.url}/hook`);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const posted = await api.postEvent('tls-ok', JSON.stringify({ n: i }), { 'x-service-partition-key': 'k' });
    t.equal(posted.status, 202);
    ids.push(posted.body.eventId);
  }
  for (const id of ids) {
    const event = await waitForEvent(api, id, (e) => e.deliveries[0]?.status === 'delivered');
    t.equal(event.deliveries[0].attempts[0].status, 200);
  }
  t.same(receiver.bodies.map((b) => JSON.parse(String(b)).n), [0, 1, 2], 'in order');
  t.equal(receiver.connections(), 1, 'one TLS connection for the three deliveries');
});

for (const [name, pair, problem] of [
  ['self-signed', pki.untrusted, /DEPTH_ZERO_SELF_SIGNED_CERT: TLS: self-signed certificate/],
  ['expired', pki.expired, /CERT_HAS_EXPIRED: TLS: certificate has expired/],
  ['wrong host name', pki.wrongHost, /ERR_TLS_CERT_ALTNAME_INVALID: TLS: .*127\.0\.0\.1/],
] as const) {
  t.test(`a receiver with a ${name} certificate: every attempt fails naming the problem, and is retried per policy`, async (t) => {
    const receiver = await startHttpsReceiver(t, pair);
    const queue = `tls-${name.replace(/\W+/g, '-')}`;
    await api.wire(queue, `${queue}-target`, `${receiver.url}/hook`, {}, { retryPolicy: { scheduleSeconds: [1], horizonSeconds: 2 } });
    const posted = await api.postEvent(queue, '{}');
    const event = await waitForEvent(api, posted.body.eventId, (e) => e.deliveries[0]?.status === 'failed', 30_000);
    const attempts = event.deliveries[0].attempts as Array<{ status: number | null; error: string }>;
    t.ok(attempts.length >= 2, `${attempts.length} attempts`);
    for (const a of attempts) t.match(a, { status: null, error: problem });
    t.equal(receiver.bodies.length, 0, 'nothing was sent over an unverified connection');
  });
}
