import t from 'tap';
import { matchesPattern } from '../../../src/http/route-pattern.js';

t.test('literal segments, :params and a final * as uWebSockets.js reads them', async (t) => {
  t.ok(matchesPattern('/healthz', '/healthz'));
  t.notOk(matchesPattern('/healthz', '/healthz/x'), 'no extra segment');
  t.notOk(matchesPattern('/healthz', '/health'), 'literal compare');
  t.ok(matchesPattern('/events/:tenant/:queue', '/events/ten_1/orders'));
  t.notOk(matchesPattern('/events/:tenant/:queue', '/events/ten_1'), 'a missing segment');
  t.notOk(matchesPattern('/events/:tenant/:queue', '/events//orders'), 'a param takes a non-empty segment');
  t.notOk(matchesPattern('/events/:tenant/:queue', '/events/ten_1/orders/x'), 'one segment per param');
  t.ok(matchesPattern('/static/*', '/static/a/b/c'), 'a final * takes the rest');
  t.ok(matchesPattern('/static/*', '/static/'), '…even nothing');
  t.notOk(matchesPattern('/static/*', '/other/a'));
});
