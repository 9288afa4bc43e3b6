import { randomBytes } from 'node:crypto';
import t from 'tap';
import { signatureHeaders } from '../../../src/delivery/signing/signing.js';
import { verifyServiceSignature } from '../../../src/verify/index.js';

// The X-Service v1 and v2 signatures as the service's own signing code makes
// them (src/delivery/signing), with the headers delivery adds beside them
// (X-Service-Event-Id, Idempotency-Key: src/delivery/http/outbound-headers.ts).

const now = Date.UTC(2026, 10, 27, 6, 0, 0);
const key = { keyId: 'sig_k1', secret: `whsec_${randomBytes(32).toString('base64url')}` };
const body = Buffer.from('{"order":"o_1","note":"caf\u00e9"}');

function delivered(url: URL, opts: { eventId?: string; idempotencyKey?: string | null; body?: Buffer; at?: number; signer?: typeof key } = {}) {
  const eventId = opts.eventId ?? 'evt_9';
  const idempotencyKey = opts.idempotencyKey === undefined ? 'idem-1' : opts.idempotencyKey;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-service-event-id': eventId };
  if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
  Object.assign(headers, signatureHeaders(opts.signer ?? key, { url, body: opts.body ?? body, eventId, idempotencyKey }, opts.at ?? now));
  return headers;
}

t.test('v2 (default) and v1 of a delivery verify', async (t) => {
  const url = new URL('https://receiver.example/hooks/p%20q?z=1&a=%7e&b=x+y');
  const headers = delivered(url);
  const base = { url: '/hooks/p%20q?z=1&a=%7e&b=x+y', headers, body, secret: key.secret, now };
  t.match(await verifyServiceSignature(base), { ok: true, version: 'v2', keyId: 'sig_k1', eventId: 'evt_9', idempotencyKey: 'idem-1', nonce: headers['x-service-nonce'], timestamp: now / 1000, secretIndex: 0 });
  t.match(await verifyServiceSignature({ ...base, version: 'v1' }), { ok: true, version: 'v1' });
  t.match(await verifyServiceSignature({ ...base, version: 'either' }), { ok: true, version: 'v2' }, 'either: v2 when sent');
  t.match(await verifyServiceSignature({ ...base, url: url.toString() }), { ok: true }, 'a full URL (fetch-style request.url)');
  t.match(await verifyServiceSignature({ ...base, url: '/hooks/p%20q?b=x+y&a=~&z=1' }), { ok: true }, 'the query is compared canonically');
  t.match(await verifyServiceSignature({ ...base, body: body.toString('utf8') }), { ok: true }, 'the body as text');
  t.match(await verifyServiceSignature({ ...base, body: new Uint8Array(body) }), { ok: true }, 'the body as a Uint8Array');
  t.match(await verifyServiceSignature({ ...base, headers: new Headers(headers) }), { ok: true }, 'a Headers instance');
  const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
  t.match(await verifyServiceSignature({ ...base, headers: upper }), { ok: true }, 'names in any case');
  t.match(await verifyServiceSignature({ ...base, secret: ['whsec_retired', key.secret] }), { ok: true, secretIndex: 1 }, 'several secrets (rotation)');

  const noIdem = delivered(new URL('https://receiver.example/h'), { idempotencyKey: null });
  t.match(await verifyServiceSignature({ url: '/h', headers: noIdem, body, secret: key.secret, now }), { ok: true, version: 'v2', idempotencyKey: null }, 'no Idempotency-Key: an empty line');
  const empty = delivered(new URL('https://receiver.example/h?'), { body: Buffer.alloc(0) });
  t.match(await verifyServiceSignature({ url: '/h', headers: empty, body: '', secret: key.secret, now }), { ok: true }, 'an empty body, an empty query');
});

t.test('each refusal names its reason', async (t) => {
  const headers = delivered(new URL('https://receiver.example/hooks?a=1'));
  const check = (over: Partial<Parameters<typeof verifyServiceSignature>[0]>) =>
    verifyServiceSignature({ url: '/hooks?a=1', headers, body, secret: key.secret, now, ...over });
  const without = (name: string) => Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));
  t.match(await check({ body: Buffer.from('{"order":"o_2"}') }), { ok: false, reason: 'body_hash_mismatch' }, 'tampered body');
  t.match(await check({ body: Buffer.from('{"order":"o_2"}'), headers: without('x-service-content-sha256') }), { ok: false, reason: 'no_matching_signature' }, 'tampered body, hash header dropped');
  t.match(await check({ secret: 'whsec_wrong' }), { ok: false, reason: 'no_matching_signature', message: /v2 signature does not verify/ }, 'wrong secret');
  t.match(await check({ url: '/hooks?a=2' }), { ok: false, reason: 'no_matching_signature' }, 'another query');
  t.match(await check({ url: '/other?a=1' }), { ok: false, reason: 'no_matching_signature' }, 'another path');
  t.match(await check({ headers: { ...headers, 'x-service-event-id': 'evt_other' } }), { ok: false, reason: 'no_matching_signature' }, 'v2 binds the event id');
  t.match(await check({ headers: { ...headers, 'x-service-event-id': 'evt_other' }, version: 'v1' }), { ok: true }, 'v1 does not');
  t.match(await check({ headers: { ...headers, 'idempotency-key': 'idem-2' } }), { ok: false, reason: 'no_matching_signature' }, 'v2 binds the Idempotency-Key');
  t.match(await check({ headers: without('idempotency-key') }), { ok: false, reason: 'no_matching_signature' }, 'and its absence');
  t.match(await check({ now: now + 300_000 }), { ok: true }, 'exactly at the tolerance');
  t.match(await check({ now: now + 301_000 }), { ok: false, reason: 'timestamp_too_old' });
  t.match(await check({ now: now - 301_000 }), { ok: false, reason: 'timestamp_in_future' });
  t.match(await check({ now: now + 301_000, toleranceSeconds: 600 }), { ok: true });
  t.match(await check({ headers: { ...headers, 'x-service-timestamp': '1e9' } }), { ok: false, reason: 'bad_format' });
  t.match(await check({ headers: { ...headers, 'x-service-signatures': 'v3=abcd' } }), { ok: false, reason: 'bad_format' }, 'no v2 entry');
  t.match(await check({ headers: { ...headers, 'x-service-signature': 'not-hex' }, version: 'v1' }), { ok: false, reason: 'bad_format' });
  for (const name of ['x-service-timestamp', 'x-service-nonce', 'x-service-signatures', 'x-service-event-id']) {
    t.match(await check({ headers: without(name) }), { ok: false, reason: 'missing_header' }, `${name} missing`);
  }
  t.match(await check({ headers: without('x-service-signature'), version: 'v1' }), { ok: false, reason: 'missing_header' }, 'x-service-signature missing (v1)');
  t.match(await check({ headers: without('x-service-signatures'), version: 'either' }), { ok: true, version: 'v1' }, 'either: v1 when no v2 is sent');
  t.match(await check({ headers: without('x-service-signatures') }), { ok: false, reason: 'missing_header' }, 'but the default wants v2');
  t.match(await check({ headers: {} }), { ok: false, reason: 'missing_header' });
  await t.rejects(check({ secret: [] }), TypeError, 'no secret is an argument mistake');
});
