import t from 'tap';
import { decodePathSegment } from '../../../src/http/path-segment.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (err) {
    return (err as { code?: string }).code ?? 'thrown';
  }
};

t.test('path parameters are percent-decoded names; what cannot be a name is 404', async (t) => {
  t.equal(decodePathSegment('orders'), 'orders');
  t.equal(decodePathSegment('caf%C3%A9'), 'café');
  t.equal(decodePathSegment('a%2Fb'), 'a/b');
  for (const bad of ['%', '%E0%A4%A', '%00', 'a%0Ab', '%7F', '%1B']) t.equal(codeOf(() => decodePathSegment(bad)), 'not_found', bad);
});
