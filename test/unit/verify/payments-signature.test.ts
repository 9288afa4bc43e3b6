import t from 'tap';
import Stripe from 'stripe';
import { paymentsSignature } from '../../../src/delivery/signing/signing.js';
import { verifyPaymentsSignature } from '../../../src/verify/index.js';

// Payments-Signature as the service re-signs it (src/delivery/signing), and as Stripe's library makes it.

const now = Date.UTC(2026, 10, 27, 6, 0, 0);
const secret = 'whsec_payments_secret';
// Raw bytes, not all UTF-8: the HMAC covers the bytes as received.
const body = Buffer.concat([Buffer.from('{"id":"evt_s","object":"event","x":"'), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from('"}')]);

t.test("the service's Payments-Signature and Stripe's test header verify", async (t) => {
  const header = paymentsSignature(secret, body, now);
  t.match(await verifyPaymentsSignature({ body, header, secret, now }), { ok: true, timestamp: now / 1000, secretIndex: 0 });
  t.match(await verifyPaymentsSignature({ body: new Uint8Array(body), headers: { 'Payments-Signature': header }, secret, now }), { ok: true }, 'read from headers, any case');
  t.match(await verifyPaymentsSignature({ body, headers: new Headers({ 'payments-signature': header }), secret: ['old', secret], now }), { ok: true, secretIndex: 1 }, 'a Headers instance, several secrets');

  const json = '{"id":"evt_t","object":"event"}';
  const stripeHeader = new Stripe('sk_test_x').webhooks.generateTestHeaderString({ payload: json, secret, timestamp: now / 1000 });
  t.match(await verifyPaymentsSignature({ body: json, header: stripeHeader, secret, now }), { ok: true }, "Stripe's library signs");
  const [, , mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!;
  t.match(await verifyPaymentsSignature({ body, header: `t=${now / 1000},v0=ff,v1=${'0'.repeat(64)},v1=${mac}`, secret, now }), { ok: true }, 'any v1 entry; other schemes ignored');
});

t.test('each refusal names its reason', async (t) => {
  const header = paymentsSignature(secret, body, now);
  const check = (over: Partial<Parameters<typeof verifyPaymentsSignature>[0]>) => verifyPaymentsSignature({ body, header, secret, now, ...over });
  t.match(await check({ body: Buffer.concat([body, Buffer.from(' ')]) }), { ok: false, reason: 'no_matching_signature' }, 'tampered body');
  t.match(await check({ secret: 'whsec_other' }), { ok: false, reason: 'no_matching_signature' }, 'wrong secret');
  t.match(await check({ now: now + 300_000 }), { ok: true }, 'exactly at the tolerance');
  t.match(await check({ now: now + 301_000 }), { ok: false, reason: 'timestamp_too_old' });
  t.match(await check({ now: now - 301_000 }), { ok: false, reason: 'timestamp_in_future' });
  t.match(await check({ now: now + 301_000, toleranceSeconds: 301 }), { ok: true });
  t.match(await check({ header: header.replace(/t=\d+/, 't=soon') }), { ok: false, reason: 'bad_format' }, 't not digits');
  t.match(await check({ header: header.replace(/t=\d+,/, '') }), { ok: false, reason: 'bad_format' }, 'no t');
  t.match(await check({ header: `t=${now / 1000}` }), { ok: false, reason: 'bad_format' }, 'no v1');
  t.match(await check({ header: `t=${now / 1000},t=${now / 1000},v1=00` }), { ok: false, reason: 'bad_format' }, 't twice');
  t.match(await check({ header: 'nonsense' }), { ok: false, reason: 'bad_format' });
  t.match(await check({ header: `t=${now / 1000},v1=zz` }), { ok: false, reason: 'no_matching_signature' }, 'a v1 that is not hex matches nothing');
  t.match(await check({ header: undefined }), { ok: false, reason: 'missing_header' });
  t.match(await check({ header: undefined, headers: { other: 'x' } }), { ok: false, reason: 'missing_header' });
  await t.rejects(check({ secret: '' }), TypeError, 'an empty secret is an argument mistake');
});
