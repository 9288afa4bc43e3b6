import t from 'tap';
import { decodeAttempts, encodeAttempts, type AttemptEntry } from '../../../src/storage/attempt-codec.js';

const received = Date.parse('2026-11-27T05:16:06.120Z');

t.test('a first attempt that succeeded takes 10 bytes', async (t) => {
  const ok: AttemptEntry = { at: '2026-11-27T05:16:06.124Z', status: 200, durationMs: 3, error: null };
  t.equal(encodeAttempts([ok], received), '[4,200,3]');
  t.same(decodeAttempts('[4,200,3]', received), [ok]);
});

t.test('errors, no answer, simulated attempts and later retries round-trip', async (t) => {
  const attempts: AttemptEntry[] = [
    { at: '2026-11-27T05:16:06.124Z', status: null, durationMs: 5000, error: 'timeout after 5000 ms, "quoted", comma,' },
    { at: '2026-11-27T05:16:11.200Z', status: 503, durationMs: 12, error: null },
    { at: '2026-11-28T05:16:11.200Z', status: 200, durationMs: 1, error: null, simulated: true },
    { at: '2026-11-27T05:16:06.100Z', status: 410, durationMs: 2, error: 'gone' },
  ];
  const text = encodeAttempts(attempts, received);
  t.same(decodeAttempts(text, received), attempts);
  // Appending is text concatenation, as the upsert does it.
  const first = encodeAttempts(attempts.slice(0, 2), received);
  const rest = encodeAttempts(attempts.slice(2), received);
  t.same(decodeAttempts(`${first},${rest}`, received), attempts);
});

t.test('no attempts: empty text', async (t) => {
  t.equal(encodeAttempts([], received), '');
  t.same(decodeAttempts('', received), []);
});
