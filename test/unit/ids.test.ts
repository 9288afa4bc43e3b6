import t from 'tap';
import { eventIdTime, hasPrefix, newEventId, newId, randomBytesPooled, type IdPrefix } from '../../src/ids.js';

// docs/api.md#conventions prefixes.
const PREFIXES: IdPrefix[] = ['lic', 'ten', 'cat', 'pkg', 'int', 'act', 'evt', 'que', 'tgt', 'key', 'sub', 'run', 'att'];
const URL_SAFE = /^[A-Za-z0-9_-]+$/;

t.test('ids carry their prefix and a URL-safe body', async (t) => {
  for (const prefix of PREFIXES) {
    const id = newId(prefix);
    t.ok(id.startsWith(`${prefix}_`), id);
    t.match(id.slice(prefix.length + 1), URL_SAFE);
    t.equal(encodeURIComponent(id), id, 'nothing to escape in a URL');
  }
});

t.test('the body holds at least 96 random bits', async (t) => {
  const body = newId('evt').slice(4);
  // 22 base64url characters = 132 bits of encoding for 128 random bits.
  t.ok(body.length >= 22, `body length ${body.length}`);
  // Estimate the entropy per character position from many samples (log2 of the
  // number of distinct values seen); fixed or counter-like parts contribute ~0.
  const ids = Array.from({ length: 4000 }, () => newId('evt').slice(4));
  let bits = 0;
  for (let i = 0; i < body.length; i++) bits += Math.log2(new Set(ids.map((id) => id[i])).size);
  t.ok(bits >= 96, `about ${bits.toFixed(1)} bits observed`);
});

t.test('100 000 ids are all distinct', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 100_000; i++) seen.add(newId('evt'));
  t.equal(seen.size, 100_000);
});

t.test('pooled random bytes do not repeat across pool refills', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) seen.add(randomBytesPooled(16).toString('hex'));
  t.equal(seen.size, 5000);
  t.equal(randomBytesPooled(100_000).length, 100_000, 'larger than the pool');
  t.equal(randomBytesPooled(0).length, 0);
});

t.test('a returned buffer is not overwritten by later draws', async (t) => {
  const first = randomBytesPooled(16);
  const copy = Buffer.from(first);
  for (let i = 0; i < 2000; i++) randomBytesPooled(16);
  t.ok(first.equals(copy));
});

t.test('hasPrefix', async (t) => {
  for (const prefix of PREFIXES) t.equal(hasPrefix(newId(prefix), prefix), true, prefix);
  t.equal(hasPrefix(newId('ten'), 'pkg'), false, 'another prefix');
  t.equal(hasPrefix('ten_', 'ten'), false, 'empty body');
  t.equal(hasPrefix('ten_abc', 'ten'), false, 'too short to be an id');
  t.equal(hasPrefix('ten_abc/../../x', 'ten'), false, 'not URL-safe');
  t.equal(hasPrefix('ten_aaaaaaaaaaaa aa', 'ten'), false, 'space');
  t.equal(hasPrefix(`ten_${'a'.repeat(500)}`, 'ten'), false, 'absurdly long');
  t.equal(hasPrefix('tenx_aaaaaaaaaaaaaaaaaaaaaa', 'ten'), false);
  t.equal(hasPrefix('TEN_aaaaaaaaaaaaaaaaaaaaaa', 'ten'), false, 'prefix is case-sensitive');
});

t.test('event ids: evt_ and 24 URL-safe characters that carry the receive time and 96 random bits', async (t) => {
  const now = Date.now();
  const id = newEventId(now);
  t.match(id, /^evt_[A-Za-z0-9_-]{24}$/);
  t.equal(hasPrefix(id, 'evt'), true);
  t.equal(eventIdTime(id), now, 'the time reads back');
  for (const ms of [0, 1, 2 ** 40 + 12345, 2 ** 48 - 1]) t.equal(eventIdTime(newEventId(ms)), ms, `time ${ms}`);
  // Minted in the same millisecond: the 16 characters after the time carry the randomness.
  const ids = Array.from({ length: 4000 }, () => newEventId(now).slice(12));
  t.equal(new Set(ids).size, 4000, 'all distinct within one millisecond');
  let bits = 0;
  for (let i = 0; i < 16; i++) bits += Math.log2(new Set(ids.map((x) => x[i])).size);
  t.ok(bits >= 95, `about ${bits.toFixed(1)} bits observed in 16 characters (96 drawn)`);
});

t.test('eventIdTime is null for ids without a time', async (t) => {
  t.equal(eventIdTime(newId('evt')), null, 'a 22-character event id (before times were added)');
  t.equal(eventIdTime(newEventId(Date.now()).replace('evt_', 'tgt_')), null, 'another prefix');
  t.equal(eventIdTime(`evt_${'a'.repeat(23)}!`), null, 'not base64url');
  t.equal(eventIdTime(`evt_${'a'.repeat(25)}`), null, 'too long');
});
