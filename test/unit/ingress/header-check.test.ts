import t from 'tap';
import { checkHeaderValues, checkIdempotencyKey } from '../../../src/ingress/header-check.js';
import { DEFAULT_SOURCES } from '../../../src/ingress/queue-directory.js';

const sources = DEFAULT_SOURCES;

t.test('header values: controls (but HTAB) and U+FFFD are invalid_header naming the header', async (t) => {
  t.doesNotThrow(() => checkHeaderValues({ a: 'plain', b: 'tab\there', c: 'café 東京 🚀', d: '' }, sources));
  for (const bad of ['a\u0000b', 'a\u0001', '\u001b[0m', 'del\u007f', 'not utf-8 \uFFFD']) {
    t.throws(() => checkHeaderValues({ ok: 'x', 'x-bad': bad }, sources), { code: 'invalid_header', status: 400, details: { header: 'x-bad' } }, JSON.stringify(bad));
  }
});

t.test('context headers: controls are left to the context step (context_*_invalid), U+FFFD is still invalid_header', async (t) => {
  t.doesNotThrow(() => checkHeaderValues({ 'x-service-event-type': 'a\u0001b', 'x-service-group-key': 'a\rb' }, sources));
  t.throws(() => checkHeaderValues({ 'x-service-partition-key': 'a\uFFFD' }, sources), { code: 'invalid_header' });
  const custom = { ...sources, eventType: { source: 'header' as const, name: 'X-Type' } };
  t.doesNotThrow(() => checkHeaderValues({ 'x-type': 'a\u0001' }, custom), 'a queue-configured header name counts too');
  t.throws(() => checkHeaderValues({ 'x-service-event-type': 'a\u0001' }, custom), { code: 'invalid_header' }, 'the default name is a plain header then');
});

t.test('Idempotency-Key: absent or empty is none; controls and over-long keys refused', async (t) => {
  t.equal(checkIdempotencyKey(undefined, 255), null);
  t.equal(checkIdempotencyKey('', 255), null);
  t.equal(checkIdempotencyKey('order-42 ✓', 255), 'order-42 ✓');
  t.throws(() => checkIdempotencyKey('a\tb', 255), { code: 'invalid_header' });
  t.throws(() => checkIdempotencyKey('a\u0085b', 255), { code: 'invalid_header' });
  t.equal(checkIdempotencyKey('é'.repeat(127) + 'a', 255), 'é'.repeat(127) + 'a', '255 bytes');
  t.throws(() => checkIdempotencyKey('é'.repeat(128), 255), { code: 'invalid_header' }, '256 bytes');
});

t.test("an inbound source's delivery id stands for Idempotency-Key: same rules, named by its header", async (t) => {
  t.equal(checkIdempotencyKey('72d3162e-cc78-11e3-81ab-4c9367dc0958', 255, 'x-github-delivery'), '72d3162e-cc78-11e3-81ab-4c9367dc0958');
  t.equal(checkIdempotencyKey(undefined, 255, 'webhook-id'), null);
  t.throws(() => checkIdempotencyKey('x'.repeat(256), 255, 'webhook-id'), { code: 'invalid_header', details: { header: 'webhook-id' }, message: /webhook-id header is over/ });
  t.throws(() => checkIdempotencyKey('a\u0085b', 255, 'x-shopify-webhook-id'), { code: 'invalid_header', details: { header: 'x-shopify-webhook-id' } });
});
