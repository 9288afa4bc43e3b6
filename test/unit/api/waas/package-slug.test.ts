import t from 'tap';
import { slugify } from '../../../../src/api/waas/package-slug.js';

t.test('package keys are slugs of the name', async (t) => {
  t.equal(slugify('Orders & Refunds'), 'orders-refunds');
  t.equal(slugify('  Données clients  '), 'donnees-clients', 'accents folded, ends trimmed');
  t.equal(slugify('A--B__C'), 'a-b-c', 'runs of separators collapse');
  t.equal(slugify('日本'), 'package', 'nothing usable gives a fixed word');
  t.equal(slugify('x'.repeat(100)).length, 64, 'at most 64 characters');
  t.notMatch(slugify(`${'a'.repeat(63)} b`), /-$/, 'never ends with a dash after truncation');
  t.match(slugify('Any Name 2024!'), /^[a-z0-9]+(-[a-z0-9]+)*$/);
});
