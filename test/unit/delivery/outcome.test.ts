import t from 'tap';
import { classify, parseRetryAfter } from '../../../src/delivery/outcome.js';
import type { DispatchResult } from '../../../src/delivery/http/http-dispatcher.js';

const response = (status: number, headers: Record<string, string> = {}): DispatchResult => ({
  kind: 'response',
  status,
  headers,
  body: Buffer.alloc(0),
  durationMs: 1,
});

t.test('2xx is delivered', async (t) => {
  for (const status of [200, 201, 202, 204, 299]) {
    t.match(classify(response(status)), { kind: 'delivered', status }, `${status}`);
  }
});

t.test('3xx is not followed and is retried', async (t) => {
  for (const status of [301, 302, 303, 307, 308]) {
    const out = classify(response(status, { location: 'https://elsewhere.example/' }));
    t.equal(out.kind, 'retry', `${status}`);
  }
});

t.test('5xx is retried', async (t) => {
  for (const status of [500, 502, 503, 504, 599]) t.equal(classify(response(status)).kind, 'retry', `${status}`);
});

t.test('408, 425 and 429 are retried', async (t) => {
  for (const status of [408, 425, 429]) t.equal(classify(response(status)).kind, 'retry', `${status}`);
});

t.test('network errors and timeouts are retried', async (t) => {
  for (const code of ['ECONNREFUSED', 'ETIMEDOUT', 'ESSRF']) {
    const out = classify({ kind: 'error', error: 'boom', code, durationMs: 3 });
    t.equal(out.kind, 'retry', code);
    if (out.kind === 'retry') t.equal(out.retryAfterMs, null, 'no Retry-After without a response');
  }
});

t.test('410 fails and disables the target', async (t) => {
  t.match(classify(response(410)), { kind: 'failed', disableTarget: true });
});

t.test('other 4xx fail at once without disabling the target', async (t) => {
  for (const status of [400, 401, 403, 404, 409, 413, 422]) {
    t.match(classify(response(status)), { kind: 'failed', disableTarget: false }, `${status}`);
  }
});

t.test("4xx listed in the target's retryableStatuses are retried", async (t) => {
  t.equal(classify(response(409), [409, 423]).kind, 'retry');
  t.equal(classify(response(423), [409, 423]).kind, 'retry');
  t.equal(classify(response(404), [409, 423]).kind, 'failed', 'unlisted 4xx still fails');
});

t.test('408, 425, 429 and 503 honour Retry-After in seconds', async (t) => {
  for (const status of [408, 425, 429, 503]) {
    const out = classify(response(status, { 'retry-after': '120' }));
    t.match(out, { kind: 'retry', retryAfterMs: 120_000 }, `${status}`);
  }
});

t.test('Retry-After as an HTTP date', async (t) => {
  const at = new Date(Date.now() + 60_000);
  const out = classify(response(503, { 'retry-after': at.toUTCString() }));
  t.equal(out.kind, 'retry');
  if (out.kind !== 'retry') return;
  // toUTCString drops milliseconds: the delay is within a second (plus test time) of 60 s.
  t.ok(out.retryAfterMs !== null && out.retryAfterMs > 58_000 && out.retryAfterMs <= 60_000, `got ${out.retryAfterMs}`);
});

t.test('a retryable status without Retry-After leaves the delay to the schedule', async (t) => {
  t.match(classify(response(503)), { kind: 'retry', retryAfterMs: null });
  t.match(classify(response(500, { 'retry-after': '30' })), { kind: 'retry' });
});

t.test('parseRetryAfter', async (t) => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  t.equal(parseRetryAfter('0', now), 0);
  t.equal(parseRetryAfter('5', now), 5_000);
  t.equal(parseRetryAfter(' 7 ', now), 7_000, 'surrounding whitespace tolerated');
  t.equal(parseRetryAfter(['9', '20'], now), 9_000, 'first of repeated headers');
  t.equal(parseRetryAfter('Tue, 01 Jan 2030 00:00:30 GMT', now), 30_000, 'IMF-fixdate');
  t.equal(parseRetryAfter('Mon, 31 Dec 2029 23:59:00 GMT', now), 0, 'a date in the past means now, never negative');
  t.equal(parseRetryAfter(undefined, now), null);
  t.equal(parseRetryAfter('', now), null);
  t.equal(parseRetryAfter('soon', now), null);
  t.equal(parseRetryAfter('12abc', now), null);
});

t.test('Retry-After that is neither delay-seconds nor an HTTP-date is ignored', async (t) => {
  for (const v of ['1.5', '-1', 'soon', '']) t.equal(parseRetryAfter(v), null, JSON.stringify(v));
  t.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')), 60_000);
});
