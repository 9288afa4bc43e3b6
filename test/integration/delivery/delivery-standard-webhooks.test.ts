import t from 'tap';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { freshBackends } from '../../helpers/backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from '../../helpers/nodes.js';
import { standardAttempts } from '../../helpers/delivery.js';
import type { Received } from '../../helpers/receiver.js';

/**
 * A queue with outboundSigning `standard`: deliveries carry webhook-id,
 * webhook-timestamp and webhook-signature, checked here by the libraries
 * receivers use (standardwebhooks, svix), with the `standardSecret` the
 * signing-key API returns — on every retry, across a key rotation, and never
 * for a tampered body, a stale timestamp or a revoked key.
 */
const backends = await freshBackends(t);
const creds = await bootstrapDatabase(backends.databaseUrl);
const node = await startTestNode(t, backends);
const api = clientFor(node.port, creds);

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});
/** Both libraries' verdicts on one request: null when it verifies, else the error's message. */
function verdicts(secret: string, body: Buffer | string, headers: Record<string, string>): [string | null, string | null] {
  const run = (verify: () => unknown) => {
    try {
      verify();
      return null;
    } catch (err) {
      return (err as Error).message || 'refused';
    }
  };
  return [run(() => new StandardWebhook(secret).verify(body.toString(), headers)), run(() => new SvixWebhook(secret).verify(body.toString(), headers))];
}

t.test('deliveries of a standard queue verify with standardwebhooks and svix, on every retry and across a key rotation', async (t) => {
  const first = await api.manage('POST', api.tenantPath('/signing-keys'));
  t.equal(first.status, 201);
  t.match(first.body.standardSecret, /^whsec_[A-Za-z0-9+/]+=*$/, 'standardSecret: whsec_ and standard base64');
  const { eventId, body, attempts, receiver } = await standardAttempts(t, api);
  for (const [i, r] of attempts.entries()) {
    t.equal(r.headers['webhook-id'], eventId, `attempt ${i + 1}: webhook-id is the event id`);
    t.equal(r.body.toString(), body, 'the body byte for byte');
    t.same(verdicts(first.body.standardSecret, r.body, headersOf(r)), [null, null], `attempt ${i + 1} verifies with both libraries`);
    t.notOk(r.headers['x-service-signature'], 'no X-Service signature headers on a standard queue');
  }
  t.ok(new Set(attempts.map((r) => r.headers['webhook-timestamp'])).size >= 2, 'each attempt has its own timestamp');

  // Rotation: a second key; both sign, so a receiver holding either secret verifies.
  const second = await api.manage('POST', api.tenantPath('/signing-keys'));
  const next = await api.postEvent('std', '{"n":2}');
  await receiver.waitFor((rs) => rs.some((r) => r.headers['webhook-id'] === next.body.eventId), 30_000, 'the event after the rotation');
  const rotated = receiver.requests.find((r) => r.headers['webhook-id'] === next.body.eventId)!;
  t.equal(String(rotated.headers['webhook-signature']).split(' ').length, 2, 'two v1 entries during the rotation');
  t.same(verdicts(first.body.standardSecret, rotated.body, headersOf(rotated)), [null, null], 'the old secret verifies');
  t.same(verdicts(second.body.standardSecret, rotated.body, headersOf(rotated)), [null, null], 'the new secret verifies');

  // A tampered body and a stale timestamp are refused by both.
  const tampered = verdicts(second.body.standardSecret, '{"n":3}', headersOf(rotated));
  t.ok(tampered[0] && tampered[1], `a changed body is refused (${tampered.join(' / ')})`);
  const stale = { ...headersOf(rotated), 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600) };
  const old = verdicts(second.body.standardSecret, rotated.body, stale);
  t.ok(old[0] && old[1], `an hour-old timestamp is refused (${old.join(' / ')})`);

  // The first key revoked: later deliveries verify with the second secret only.
  t.equal((await api.manage('DELETE', api.tenantPath(`/signing-keys/${first.body.keyId}`))).status, 204);
  const after = await api.postEvent('std', '{"n":4}');
  await receiver.waitFor((rs) => rs.some((r) => r.headers['webhook-id'] === after.body.eventId), 30_000, 'the event after the revocation');
  const revoked = receiver.requests.find((r) => r.headers['webhook-id'] === after.body.eventId)!;
  const withOld = verdicts(first.body.standardSecret, revoked.body, headersOf(revoked));
  t.ok(withOld[0] && withOld[1], 'the revoked key no longer signs: its secret fails');
  t.same(verdicts(second.body.standardSecret, revoked.body, headersOf(revoked)), [null, null], 'the active one verifies');
});
