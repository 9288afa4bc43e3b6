import t from 'tap';
import { FlowLimit, type FlowCeilings } from '../../../../src/delivery/flow/flow-limit.js';

const open: FlowCeilings = { maxConcurrency: 1000, maxRatePerSecond: null };

/** Starts as many requests as the limit allows now; returns their tickets. */
function fill(l: FlowLimit, c: FlowCeilings, now = 0): number[] {
  const tickets: number[] = [];
  while (l.blockedUntil(now, c) === 0) tickets.push(l.start(c));
  return tickets;
}

/** A receiver under steady load: `n` answers, oldest first, each freed place taken again at once. */
function answer(l: FlowLimit, c: FlowCeilings, inFlight: number[], n: number, signal: 'grow' | 'neutral' | 'overload'): void {
  inFlight.push(...fill(l, c));
  for (let i = 0; i < n; i++) {
    l.finish(inFlight.shift()!, signal, 0, c);
    inFlight.push(...fill(l, c));
  }
}

t.test('slow start: a limit in use grows by one per fast answer, doubling per round trip', async (t) => {
  const l = new FlowLimit(4);
  const inFlight: number[] = [];
  answer(l, open, inFlight, 4, 'grow');
  t.equal(l.limit(open.maxConcurrency), 8);
  answer(l, open, inFlight, 8, 'grow');
  answer(l, open, inFlight, 16, 'grow');
  t.equal(l.limit(open.maxConcurrency), 32, '4 → 8 → 16 → 32 in three windows of answers');
  t.equal(inFlight.length, 32);
});

t.test('no growth while the limit is mostly unused, nor from neutral answers', async (t) => {
  const l = new FlowLimit(10);
  for (let i = 0; i < 50; i++) l.finish(l.start(open), 'grow', 0, open); // one in flight of 10
  t.equal(l.limit(open.maxConcurrency), 10);
  const tickets = fill(l, open);
  for (const ticket of tickets) l.finish(ticket, 'neutral', 0, open);
  t.equal(l.limit(open.maxConcurrency), 10);
});

t.test('a timeout, 429 or 503 halves the limit once per window; growth is additive after it', async (t) => {
  const l = new FlowLimit(64);
  const tickets = fill(l, open);
  t.equal(tickets.length, 64);
  // Every request of the window is answered "overloaded": one halving, not six.
  for (const ticket of tickets) l.finish(ticket, 'overload', 0, open);
  t.equal(l.limit(open.maxConcurrency), 32);
  // A request started after the decrease counts again.
  l.finish(l.start(open), 'overload', 0, open);
  t.equal(l.limit(open.maxConcurrency), 16);
  // Past the threshold: about +1 per window of answers, not +1 per answer.
  const inFlight: number[] = [];
  answer(l, open, inFlight, 20, 'grow');
  t.equal(l.limit(open.maxConcurrency), 17);
  answer(l, open, inFlight, 51, 'grow');
  t.equal(l.limit(open.maxConcurrency), 19, 'about three more windows: +2.x, not +51');
});

t.test('the limit never falls below one', async (t) => {
  const l = new FlowLimit(2);
  for (let i = 0; i < 5; i++) l.finish(l.start(open), 'overload', 0, open);
  t.equal(l.limit(open.maxConcurrency), 1);
  t.equal(l.blockedUntil(0, open), 0, 'one request may still start');
});

t.test('the ceiling caps growth and start, and a lowered ceiling applies at once', async (t) => {
  const c: FlowCeilings = { maxConcurrency: 5, maxRatePerSecond: null };
  const l = new FlowLimit(16);
  t.equal(l.limit(c.maxConcurrency), 5);
  answer(l, c, [], 100, 'grow');
  t.equal(l.inFlight, 5, 'never more than maxConcurrency at once');
  const l1 = new FlowLimit(16);
  const tickets = fill(l1, c);
  t.equal(tickets.length, 5);
  t.equal(l1.blockedUntil(0, c), Infinity, 'full: only a finishing request makes room');
  const lower: FlowCeilings = { maxConcurrency: 2, maxRatePerSecond: null };
  for (const ticket of tickets) l1.finish(ticket, 'grow', 0, lower);
  t.equal(fill(l1, lower).length, 2);
});

t.test('Retry-After pauses new starts for that long, bounded by maxPauseMs', async (t) => {
  const l = new FlowLimit(8);
  l.finish(l.start(open), 'overload', 1_000, open, 2_000, 60_000);
  t.equal(l.blockedUntil(1_500, open), 3_000, 'paused until 2 s after the answer');
  t.equal(l.blockedUntil(3_000, open), 0);
  l.finish(l.start(open), 'overload', 10_000, open, 3_600_000, 60_000);
  t.equal(l.blockedUntil(10_000, open), 70_000, 'an hour asked, a minute given');
  // A neutral or fast answer does not cut a pause short.
  l.finish(l.start(open), 'grow', 20_000, open);
  t.equal(l.blockedUntil(20_000, open), 70_000);
});

t.test('maxRatePerSecond: starts are spaced by the rate after a burst of a tenth of a second', async (t) => {
  const c: FlowCeilings = { maxConcurrency: 1000, maxRatePerSecond: 100 };
  const l = new FlowLimit(1000);
  let now = 0;
  let started = 0;
  // Ask every millisecond for 2 s of clock, finishing at once: the rate, not concurrency, binds.
  for (; now < 2_000; now++) {
    while (l.blockedUntil(now, c) === 0) {
      l.finish(l.start(c), 'grow', now, c);
      started++;
    }
  }
  t.ok(started >= 199 && started <= 211, `${started} starts in 2 s at 100/s (burst of 10)`);
  const l2 = new FlowLimit(10);
  const slow: FlowCeilings = { maxConcurrency: 10, maxRatePerSecond: 0.5 };
  t.equal(l2.blockedUntil(0, slow), 0);
  l2.start(slow);
  t.equal(l2.blockedUntil(0, slow), 2_000, 'one every two seconds');
});
