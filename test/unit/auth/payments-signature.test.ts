import t from 'tap';
import { parsePaymentsSignature } from '../../../src/auth/payments-signature.js';

const sig = (c: string) => c.repeat(64);

t.test("parses Stripe's t=…,v1=… layout, keeping every well-formed v1", async (t) => {
  t.same(parsePaymentsSignature(`t=1700000000,v1=${sig('a')}`), { timestamp: '1700000000', signatures: [sig('a')] });
  t.same(parsePaymentsSignature(`t=17, v1=${sig('a')},v0=${sig('c')},v1=${sig('b')}`), { timestamp: '17', signatures: [sig('a'), sig('b')] }, 'v0 ignored, spaces trimmed');
  t.same(parsePaymentsSignature(`v1=xyz,t=5,v1=${sig('d')}`).signatures, [sig('d')], 'a malformed v1 is dropped');
  t.equal(parsePaymentsSignature(`t=1,${Array.from({ length: 50 }, () => `v1=${sig('e')}`).join(',')}`).signatures.length, 8, 'bounded work');
});

t.test('missing pieces are invalid_signature', async (t) => {
  for (const header of [undefined, '', 'garbage', 't=1', `v1=${sig('a')}`, 't=1,v1=short']) {
    t.throws(() => parsePaymentsSignature(header), { code: 'invalid_signature', status: 401 }, JSON.stringify(header));
  }
});
