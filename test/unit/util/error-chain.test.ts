import t from 'tap';
import { childrenOf, errorChain, errorCodes } from '../../../src/util/error-chain.js';

t.test('depth first: the error, each grouped error in order, then the cause', async (t) => {
  const leafA = Object.assign(new Error('a'), { code: 'ECONNREFUSED' });
  const leafB = Object.assign(new Error('b'), { code: 'ETIMEDOUT' });
  const group = new AggregateError([leafA, leafB], 'both failed');
  const top = new Error('start failed', { cause: group });
  t.same([...errorChain(top)].map((e) => (e as Error).message), ['start failed', 'both failed', 'a', 'b']);
  t.same(errorCodes(top), ['ECONNREFUSED', 'ETIMEDOUT']);
  t.same(childrenOf(group), [leafA, leafB]);
  t.same(childrenOf('text'), [], 'a thrown string has no children');
});

t.test('a cause loop ends the walk; depth is bounded', async (t) => {
  const a: { message: string; cause?: unknown } = { message: 'a' };
  const b = { message: 'b', cause: a };
  a.cause = b;
  t.same([...errorChain(a)].map((e) => e.message), ['a', 'b']);
  let deep: { code: string; cause?: unknown } = { code: 'E0' };
  for (let i = 1; i <= 20; i++) deep = { code: `E${i}`, cause: deep };
  t.equal(errorCodes(deep, 3).length, 4, 'at most maxDepth levels below the top');
});
