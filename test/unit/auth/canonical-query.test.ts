import t from 'tap';
import { canonicalQuery, encodeRfc3986 } from '../../../src/auth/canonical-query.js';

t.test('empty query, empty line', async (t) => {
  t.equal(canonicalQuery(''), '');
  t.equal(canonicalQuery('&&'), '');
});

t.test('sorted by name, then by value; joined with &', async (t) => {
  t.equal(canonicalQuery('b=2&a=3&a=1&c'), 'a=1&a=3&b=2&c=');
  t.equal(canonicalQuery('a=1&a='), 'a=&a=1', 'an empty value sorts first');
});

t.test('decoded then re-encoded per RFC 3986: one canonical form for many spellings', async (t) => {
  const same = ['x=%E2%82%AC', 'x=%e2%82%ac', 'x=€'];
  for (const q of same) t.equal(canonicalQuery(q), 'x=%E2%82%AC', q);
  t.equal(canonicalQuery('%41b=%7e'), 'Ab=~', 'unreserved characters are left (or put back) as they are');
  t.equal(canonicalQuery('a=b+c'), 'a=b%2Bc', "'+' is not a space in RFC 3986");
  t.equal(canonicalQuery('a=b%20c'), 'a=b%20c');
  t.equal(canonicalQuery('path=%2Fx%2Fy&q=a/b'), 'path=%2Fx%2Fy&q=a%2Fb', 'reserved characters are always encoded');
  t.equal(canonicalQuery('k=a=b'), 'k=a%3Db', 'only the first = splits name from value');
});

t.test('malformed escapes and bytes that are not UTF-8 still have exactly one form', async (t) => {
  t.equal(canonicalQuery('a=%zz'), 'a=%25zz', 'a stray % stays a literal %');
  t.equal(canonicalQuery('a=%'), 'a=%25');
  t.equal(canonicalQuery('a=%4'), 'a=%254');
  t.equal(canonicalQuery('a=%ff%fe'), 'a=%FF%FE', 'raw bytes survive, upper-cased');
  t.equal(canonicalQuery('a=🚀'), 'a=%F0%9F%9A%80', 'a character outside the BMP is its four UTF-8 bytes');
});

t.test('encodeRfc3986 leaves exactly the unreserved set', async (t) => {
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const encoded = encodeRfc3986(all);
  const kept = encoded.replace(/%[0-9A-F]{2}/g, '');
  t.equal(kept, '-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~');
  t.notMatch(encoded, /%[0-9A-F]?[a-f]/, 'escapes are upper case');
});
