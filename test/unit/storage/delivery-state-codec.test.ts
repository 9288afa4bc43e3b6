import t from 'tap';
import { decodeDeliveries, encodePatch, linePattern, statusLetter } from '../../../src/storage/delivery-state-codec.js';

t.test('a delivered target takes one short line', async (t) => {
  t.same(decodeDeliveries('17:d:5:[4,200,3]'), [{ targetId: '17', status: 'delivered', updatedMs: 5, attempts: '[4,200,3]' }]);
  t.same(decodeDeliveries(''), [], 'no target: no line');
});

t.test('lines split on newlines only; attempts keep their colons, commas and escaped newlines', async (t) => {
  const text = '7:f:-3:[1,null,5000,"timeout: \\"a\\"\\n,b"],[9,500,2]\n12:p::\n3:b:40:';
  t.same(decodeDeliveries(text), [
    { targetId: '7', status: 'failed', updatedMs: -3, attempts: '[1,null,5000,"timeout: \\"a\\"\\n,b"],[9,500,2]' },
    { targetId: '12', status: 'pending', updatedMs: null, attempts: '' },
    { targetId: '3', status: 'blocked', updatedMs: 40, attempts: '' },
  ]);
});

t.test('a patch: status letter, no update time (the database sets it), the attempts to append', async (t) => {
  t.equal(encodePatch([{ targetId: '7', status: 'retrying', attempts: '[4,503,3]' }, { targetId: '8', status: 'pending', attempts: '' }]), '7:r::[4,503,3]\n8:p::');
  t.equal(encodePatch([]), '');
  for (const s of ['pending', 'delivered', 'retrying', 'failed', 'blocked'] as const) {
    t.equal(decodeDeliveries(`1:${statusLetter(s)}::`)[0]?.status, s, `${s} round-trips`);
  }
});

t.test('line patterns for the status filters and bulk redelivery', async (t) => {
  t.equal(linePattern('17', 'failed'), '(?:^|\n)17:f:');
  t.equal(linePattern(null, 'pending'), '(?:^|\n)\\d+:p:');
  t.equal(linePattern('17', null), '(?:^|\n)17:[a-z]:');
  t.equal(linePattern('17', 'failed', 'updated'), '(?:^|\n)17:f:(-?\\d+)');
  t.equal(linePattern(null, 'failed', 'target'), '(?:^|\n)(\\d+):f:');
  t.same('1:d:1:\n22:f:9:[1,500,1]\n3:f::'.match(new RegExp(linePattern(null, 'failed', 'target'), 'g')), ['\n22:f:', '\n3:f:'], 'each failed line, its target captured');
  t.throws(() => linePattern("1' OR 1=1", 'failed'), 'only numeric target ids');
  // The same pattern as a JS RegExp (ARE and JS agree on this subset).
  const re = new RegExp(linePattern('7', 'failed'));
  t.ok(re.test('17:d:1:\n7:f:2:'), 'the second line');
  t.notOk(re.test('17:f:1:'), '17 is not 7');
  t.notOk(re.test('1:d:1:[1,null,1,"x\\n7:f:"]'), 'not inside an (escaped) error text');
});
