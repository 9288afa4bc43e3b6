import t from 'tap';
import { LabelCap, OVERFLOW_LABEL } from '../../../src/observability/label-cap.js';

t.test('the first max values keep their label; later ones fold into other', async (t) => {
  const cap = new LabelCap(2);
  t.equal(cap.label('a'), 'a');
  t.equal(cap.label('b'), 'b');
  t.equal(cap.label('c'), OVERFLOW_LABEL);
  t.equal(cap.label('d'), OVERFLOW_LABEL);
  t.equal(cap.label('a'), 'a', 'a value seen keeps its label');
  t.equal(cap.label('b'), 'b');
  t.equal(cap.label('c'), OVERFLOW_LABEL, 'a value folded stays folded');
});

t.test('at most max + 1 distinct label values whatever comes', async (t) => {
  const cap = new LabelCap(10);
  const labels = new Set<string>();
  for (let i = 0; i < 10_000; i++) labels.add(cap.label(`target-${i % 997}`));
  t.equal(labels.size, 11);
  t.ok(labels.has(OVERFLOW_LABEL));
});
