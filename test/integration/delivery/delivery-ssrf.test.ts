import t from 'tap';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { startReceiver } from '../../helpers/receiver.js';
import { waitForEvent } from '../../helpers/delivery.js';

// Two nodes on the same backends: one whose operator allows loopback (as the
// other tests do) and one with the default guard, which allows no internal network.
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const open = await startTestNode(t, backends, { roles: ['management', 'ingress'] });
const strict = await startTestNode(t, backends, { roles: ['management', 'delivery'], delivery: { allowNetworks: [], allowLoopbackInSingleNode: false } });
const openApi = clientFor(open.port, creds);
const strictApi = clientFor(strict.port, creds);

t.test('at save: internal addresses are refused unless the config allows their network', async (t) => {
  const receiver = await startReceiver(t);
  const refused: Array<[string, string]> = [
    [receiver.url, '127.0.0.1, loopback'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata (link-local)'],
    ['http://[::1]:8080/hook', 'IPv6 loopback'],
    ['http://10.1.2.3/hook', 'private 10/8'],
    ['http://192.168.0.10/hook', 'private 192.168/16'],
    ['http://100.64.0.1/hook', 'CGNAT'],
    ['http://[fd00::1]/hook', 'unique-local'],
    ['http://[::ffff:127.0.0.1]/hook', 'IPv4-mapped loopback'],
    [`http://localhost:${new URL(receiver.url).port}/hook`, 'a name resolving to loopback'],
  ];
  for (const [url, why] of refused) {
    const res = await strictApi.manage('PUT', strictApi.tenantPath('/targets/internal'), { url });
    t.equal(res.status, 400, `${why}: ${url}`);
    t.equal(res.body.error.code, 'validation_failed');
    t.equal(res.body.error.details?.[0]?.field, 'url');
  }
  for (const url of ['ftp://example.com/hook', 'file:///etc/passwd', 'not a url']) {
    const res = await strictApi.manage('PUT', strictApi.tenantPath('/targets/scheme'), { url });
    t.equal(res.status, 400, `${url}: http or https only`);
  }
  const token = await strictApi.manage('PUT', strictApi.tenantPath('/targets/oauth-internal'), {
    url: 'http://93.184.216.34/hook',
    auth: { mode: 'oauth2', tokenUrl: 'http://169.254.169.254/token', clientId: 'c', clientSecret: 's' },
  });
  t.equal(token.status, 400, 'the OAuth token URL is guarded too');
  t.equal(token.body.error.details?.[0]?.field, 'auth.tokenUrl');

  const allowed = await openApi.manage('PUT', openApi.tenantPath('/targets/loopback-allowed'), { url: receiver.url });
  t.equal(allowed.status, 201, '127.0.0.1 is accepted where the operator allows 127.0.0.0/8');
  const ipv6 = await openApi.manage('PUT', openApi.tenantPath('/targets/ipv6-loopback'), { url: 'http://[::1]:8080/' });
  t.equal(ipv6.status, 400, '[::1] stays refused: 127.0.0.0/8 does not cover it');
});

t.test('at connect: a delivery node that does not allow the network refuses to connect, every attempt', async (t) => {
  const receiver = await startReceiver(t);
  // Saved through the permissive node, delivered by the strict one (the only delivery node).
  await openApi.wire('internal', 'internal-target', `http://localhost:${new URL(receiver.url).port}/hook`, {}, {
    retryPolicy: { scheduleSeconds: [1], horizonSeconds: 1 },
  });
  const posted = await openApi.postEvent('internal', '{}');
  const event = await waitForEvent(strictApi, posted.body.eventId, (e) => e.deliveries[0]?.status === 'failed', 30_000);
  t.match(event.deliveries[0].attempts[0], { status: null, error: /ESSRF: refused address .* for localhost/ });
  t.equal(receiver.requests.length, 0, 'nothing reached the receiver');
});
