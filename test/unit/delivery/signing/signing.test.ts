import { createHmac } from 'node:crypto';
import t from 'tap';
import Stripe from 'stripe';
import { paymentsSignature, signatureHeaders } from '../../../../src/delivery/signing/signing.js';

const key = { keyId: 'sig_k1', secret: 'whsec_unit' };
const body = Buffer.from('{"x":1}');
const now = Date.UTC(2026, 0, 1);

t.test('outbound headers carry key id, timestamp, nonce, body hash, v1 and v2', async (t) => {
  const h = signatureHeaders(key, { url: new URL('https://r.example/hook?b=2&a=1'), body, eventId: 'evt_1', idempotencyKey: 'i' }, now);
  t.equal(h['x-service-key-id'], 'sig_k1');
  t.equal(h['x-service-timestamp'], String(now / 1000));
  t.match(h['x-service-nonce'], /^[0-9a-f]{32}$/);
  t.match(h['x-service-signature'], /^[0-9a-f]{64}$/);
  t.match(h['x-service-signatures'], /^v2=[0-9a-f]{64}$/);
  const again = signatureHeaders(key, { url: new URL('https://r.example/hook?b=2&a=1'), body, eventId: 'evt_1', idempotencyKey: 'i' }, now);
  t.not(again['x-service-nonce'], h['x-service-nonce'], 'a new nonce every time');
});

t.test('Payments-Signature is Stripe\'s scheme over the raw bytes', async (t) => {
  const raw = Buffer.concat([Buffer.from('{"id":"evt_s","object":"event","note":"'), Buffer.from([0xc3, 0xa9]), Buffer.from('"}')]);
  const header = paymentsSignature('whsec_pay', raw, Date.now());
  const [, ts, mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!;
  t.equal(mac, createHmac('sha256', 'whsec_pay').update(Buffer.concat([Buffer.from(`${ts}.`), raw])).digest('hex'));
  const event = new Stripe('sk_test_x').webhooks.constructEvent(raw, header, 'whsec_pay');
  t.equal(event.id, 'evt_s');
});

t.test('standardHeaders: a v1 entry per HMAC key, then a v1a entry per ed25519 key', async (t) => {
  const { generateKeyPairSync, verify, createPublicKey } = await import('node:crypto');
  const { standardHeaders } = await import('../../../../src/delivery/signing/signing.js');
  const pair = generateKeyPairSync('ed25519');
  const raw = pair.publicKey.export({ format: 'jwk' }).x!;
  const h = standardHeaders([key, { algorithm: 'ed25519', keyId: 'sig_ed', privateKey: pair.privateKey }], { eventId: 'evt_1', body }, now);
  const entries = h['webhook-signature']!.split(' ');
  t.equal(entries.length, 2);
  t.match(entries[0], /^v1,[A-Za-z0-9+/]+=*$/);
  t.match(entries[1], /^v1a,[A-Za-z0-9+/]+=*$/);
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' });
  const signed = Buffer.concat([Buffer.from(`evt_1.${now / 1000}.`), body]);
  const sig = Buffer.from(entries[1]!.slice(4), 'base64');
  t.equal(sig.length, 64);
  t.ok(verify(null, signed, pub, sig), 'verifies with the public key');
  t.notOk(verify(null, Buffer.concat([Buffer.from(`evt_1.${now / 1000}.`), Buffer.from('{"x":2}')]), pub, sig), 'not for another body');
  t.equal(standardHeaders([{ algorithm: 'ed25519', keyId: 'sig_ed', privateKey: pair.privateKey }], { eventId: 'evt_1', body }, now)['webhook-signature']!.split(' ').length, 1, 'ed25519 only: one v1a entry');
});
