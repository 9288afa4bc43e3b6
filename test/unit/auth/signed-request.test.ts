import t from 'tap';
import { canonicalHead, checkTimestamp, readSignedHeaders } from '../../../src/auth/signed-request.js';
import { ServiceError } from '../../../src/errors.js';

const HEX = 'a'.repeat(64);
const GOOD = {
  'x-service-key-id': 'sig_abc',
  'x-service-timestamp': '1700000000',
  'x-service-nonce': 'n-1',
  'x-service-content-sha256': HEX,
  'x-service-signature': 'b'.repeat(64),
};

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof ServiceError ? err.code : `not a ServiceError: ${String(err)}`;
  }
}

t.test('reads the five headers', async (t) => {
  t.same(readSignedHeaders(GOOD), { keyId: 'sig_abc', timestamp: '1700000000', nonce: 'n-1', contentSha: HEX, signature: 'b'.repeat(64) });
});

t.test('a missing or malformed header is invalid_signature, naming what is missing', async (t) => {
  for (const name of Object.keys(GOOD)) {
    const { [name as keyof typeof GOOD]: _gone, ...rest } = GOOD;
    t.equal(codeOf(() => readSignedHeaders(rest)), 'invalid_signature', `without ${name}`);
  }
  try {
    readSignedHeaders({});
  } catch (err) {
    t.match((err as Error).message, /X-Service-Key-Id, X-Service-Timestamp, X-Service-Nonce, X-Service-Content-SHA256, X-Service-Signature/);
  }
  const bad: Array<[string, string]> = [
    ['x-service-content-sha256', 'A'.repeat(64)],
    ['x-service-content-sha256', 'a'.repeat(63)],
    ['x-service-signature', 'g'.repeat(64)],
    ['x-service-nonce', 'has space'],
    ['x-service-nonce', 'n'.repeat(129)],
    ['x-service-key-id', 'é'],
  ];
  for (const [name, value] of bad) t.equal(codeOf(() => readSignedHeaders({ ...GOOD, [name]: value })), 'invalid_signature', `${name} = ${value.slice(0, 10)}`);
});

t.test('timestamps: digits only, inclusive tolerance', async (t) => {
  const now = 1_700_000_000;
  t.equal(checkTimestamp(String(now - 300), now, 300, 'ts'), now - 300, 'exactly at the tolerance');
  t.equal(checkTimestamp(String(now + 300), now, 300, 'ts'), now + 300);
  t.equal(codeOf(() => checkTimestamp(String(now - 301), now, 300, 'ts')), 'timestamp_out_of_range');
  t.equal(codeOf(() => checkTimestamp(String(now + 301), now, 300, 'ts')), 'timestamp_out_of_range');
  for (const raw of ['', ' 1700000000', '1700000000.0', '+1700000000', '-5', '1e9', '0x6553f100', '1700000000abc', '1234567890123']) {
    t.equal(codeOf(() => checkTimestamp(raw, now, 300, 'ts')), 'timestamp_out_of_range', JSON.stringify(raw));
  }
  t.equal(codeOf(() => checkTimestamp(String(now * 1000), now, 300, 'ts')), 'timestamp_out_of_range', 'milliseconds are not seconds');
});

t.test('the canonical head is METHOD, PATH, QUERY, key id, timestamp, nonce, each followed by a newline', async (t) => {
  const h = readSignedHeaders(GOOD);
  t.equal(canonicalHead('POST', '/events/ten_1/q%20x', 'b=2&a=1', h), 'POST\n/events/ten_1/q%20x\na=1&b=2\nsig_abc\n1700000000\nn-1\n');
  t.equal(canonicalHead('POST', '/e', '', h), 'POST\n/e\n\nsig_abc\n1700000000\nn-1\n', 'no query: an empty line');
});
