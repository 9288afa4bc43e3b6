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
