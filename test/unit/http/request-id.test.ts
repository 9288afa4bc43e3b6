import t from 'tap';
import { requestIdOf } from '../../../src/http/request-id.js';

t.test('a sane X-Request-Id is kept', async (t) => {
  for (const id of ['abc', 'req-123_x.y', '3f2a9c1e-7b4d-4e0f-9a3b-2d1c0b9a8f7e', 'a:b/c+d=e@f', 'x'.repeat(64)]) t.equal(requestIdOf(id), id);
});

t.test('one that is absent, empty, too long or holds other characters is replaced by a made one', async (t) => {
  const made = new Set<string>();
  for (const id of [undefined, '', 'x'.repeat(65), 'a b', 'a\r\nset-cookie: x=1', 'a\u0000', 'é', 'a,b', '<script>', 'a"b']) {
    const out = requestIdOf(id);
    t.not(out, id);
    t.match(out, /^[A-Za-z0-9_-]{8}-[0-9a-z]+$/, 'prefix and counter');
    made.add(out);
  }
  t.equal(made.size, 10, 'every made id is new');
});
