import t from 'tap';
import { pathSegments } from '../../../../src/api/console/console-static.js';

t.test('path segments: decoded plain names only', async (t) => {
  t.same(pathSegments('/console/'), []);
  t.same(pathSegments('/console/assets/app-1.js'), ['assets', 'app-1.js']);
  t.same(pathSegments('/console/a%20b//c/'), ['a b', 'c']);
  t.same(pathSegments('/console/%252e%252e'), ['%2e%2e'], 'decoded once only');
  for (const bad of ['/console/..', '/console/../x', '/console/%2e%2e/x', '/console/%2E%2e', '/console/a/%2e', '/console/..%2fx', '/console/a%2f..%2fb', '/console/..%5cx', '/console/%00', '/console/%zz', '/console/.env', '/console/assets/.git']) {
    t.equal(pathSegments(bad), null, bad);
  }
});
