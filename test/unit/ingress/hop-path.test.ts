import t from 'tap';
import { checkHopPath } from '../../../src/ingress/hop-path.js';
import { ServiceError } from '../../../src/errors.js';

const OWN = 'sg:ten_abc/orders';

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof ServiceError ? err.code : `not a ServiceError: ${String(err)}`;
  }
}

t.test('no chain: nothing to check', async (t) => {
  t.equal(checkHopPath(undefined, OWN, 10), null);
  t.equal(checkHopPath('', OWN, 10), null);
  t.equal(checkHopPath('   ', OWN, 10), null);
});

t.test("a chain holding the queue's own segment is a loop", async (t) => {
  t.equal(codeOf(() => checkHopPath(OWN, OWN, 10)), 'loop_detected');
  t.equal(codeOf(() => checkHopPath(`sg:ten_x/a,${OWN},sg:ten_y/b`, OWN, 10)), 'loop_detected');
  t.equal(codeOf(() => checkHopPath(`sg:ten_x/a , ${OWN} , sg:ten_y/b`, OWN, 10)), 'loop_detected', 'spaces around commas');
  t.equal(codeOf(() => checkHopPath(`sg:ten_x/a,\t${OWN}`, OWN, 10)), 'loop_detected', 'tab before segment');
});

t.test('similar but different segments are not a loop', async (t) => {
  t.equal(checkHopPath('sg:ten_abc/orders2,sg:ten_abcd/orders', OWN, 10), 'sg:ten_abc/orders2,sg:ten_abcd/orders');
});

t.test('loop and hop errors are 422', async (t) => {
  try {
    checkHopPath(OWN, OWN, 10);
    t.fail('should throw');
  } catch (err) {
    t.equal((err as ServiceError).status, 422);
  }
});

t.test('more segments than the hop budget is max_hops_exceeded', async (t) => {
  const chain = (n: number) => Array.from({ length: n }, (_, i) => `sg:ten_${i}/q`).join(',');
  t.equal(codeOf(() => checkHopPath(chain(4), OWN, 3)), 'max_hops_exceeded');
  t.equal(codeOf(() => checkHopPath(chain(11), OWN, 10)), 'max_hops_exceeded');
  t.equal(codeOf(() => checkHopPath(chain(10), OWN, 10)), null, 'exactly the budget is accepted');
  t.equal(codeOf(() => checkHopPath(chain(1), OWN, 0)), 'max_hops_exceeded', 'budget 0 takes no hops');
});

t.test('the chain is returned normalised', async (t) => {
  t.equal(checkHopPath(' a , b,c ', OWN, 10), 'a,b,c');
  t.equal(checkHopPath('a,,b,', OWN, 10), 'a,b', 'empty segments dropped');
  t.equal(checkHopPath('a,,,,,,,,,,,,,b', OWN, 2), 'a,b', 'empty segments do not count as hops');
});
