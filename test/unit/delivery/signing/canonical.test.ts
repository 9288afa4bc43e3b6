import t from 'tap';
import { canonicalQuery, v1Canonical, v2Canonical } from '../../../../src/delivery/signing/canonical.js';

t.test('QUERY: RFC 3986 encoding, sorted by name then value', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['', '', 'no query'],
    ['a=?', 'a=%3F', 'a "?" inside the query is data (callers drop only the leading one)'],
    ['b=2&a=1', 'a=1&b=2', 'sorted by name'],
    ['a=2&a=10&a=1', 'a=1&a=10&a=2', 'then by value, as text'],
    ['q=hello%20world', 'q=hello%20world', 'already encoded stays encoded'],
    ['q=hello world', 'q=hello%20world', 'a raw space is encoded'],
    ['q=a+b', 'q=a%2Bb', '"+" is a literal plus, not a space'],
    ['q=%7e%2d', 'q=~-', 'unreserved characters are decoded'],
    ['q=%c3%a9', 'q=%C3%A9', 'hex in upper case'],
    ['q=é', 'q=%C3%A9', 'raw non-ASCII as UTF-8'],
    ['flag&a=', 'a=&flag=', 'no "=" means an empty value'],
    ['a=1&&b=2', 'a=1&b=2', 'empty parts are dropped'],
    ['q=100%', 'q=100%25', 'a stray "%" is a literal percent'],
    ['q=%zz', 'q=%25zz', 'an invalid escape is literal'],
    ["k=!*'()", 'k=%21%2A%27%28%29', 'sub-delims are encoded'],
    ['a=x=y', 'a=x%3Dy', 'only the first "=" separates'],
    ['%61=1', 'a=1', 'names are canonical too'],
  ];
  for (const [input, expected, why] of cases) t.equal(canonicalQuery(input), expected, `${why}: ${JSON.stringify(input)}`);
});

t.test('v1 and v2 strings: lines joined with \\n, no trailing newline', async (t) => {
  const fields = { method: 'post', path: '/a%20b', query: 'z=1&a=2', timestamp: '1700000000', nonce: 'n0', bodySha256: 'e3b0' };
  t.equal(v1Canonical(fields), 'POST\n/a%20b\na=2&z=1\n1700000000\nn0\ne3b0');
  t.equal(v2Canonical(fields, 'evt_1', 'idem'), 'POST\n/a%20b\na=2&z=1\n1700000000\nn0\ne3b0\nevt_1\nidem');
  t.equal(v2Canonical(fields, 'evt_1', null), 'POST\n/a%20b\na=2&z=1\n1700000000\nn0\ne3b0\nevt_1\n', 'an empty line without Idempotency-Key');
});
