import t from 'tap';
import { FailureStreaks } from '../../../src/delivery/failure-streaks.js';

/** A shared store as the targets table behaves: COALESCE on failure, NULL on success. */
function store(clock: { now: number }) {
  const since = new Map<string, number>();
  const calls: string[] = [];
  return {
    calls,
    since,
    async failing(id: string) {
      calls.push(`failing ${id}`);
      if (!since.has(id)) since.set(id, clock.now);
      return new Date(since.get(id)!);
    },
    async healthy(id: string) {
      calls.push(`healthy ${id}`);
      since.delete(id);
    },
  };
}

t.test('a streak long enough disables; the store is read at most once per refresh', async (t) => {
  const clock = { now: 1_000_000 };
  const s = store(clock);
  const streaks = new FailureStreaks(s, 10_000, 1_000, () => clock.now);
  t.equal(await streaks.failed('t1'), false);
  clock.now += 500;
  t.equal(await streaks.failed('t1'), false);
  t.equal(s.calls.length, 1, 'the second failure within the refresh interval costs no query');
  clock.now += 9_600;
  t.equal(await streaks.failed('t1'), true, 'failing for 10.1 s of a 10 s limit');
  t.equal(streaks.since('t1'), 1_000_000);
});

t.test('a success anywhere ends the streak', async (t) => {
  const clock = { now: 0 };
  const s = store(clock);
  const a = new FailureStreaks(s, 10_000, 1_000, () => clock.now);
  const b = new FailureStreaks(s, 10_000, 1_000, () => clock.now);
  await a.failed('t1');
  clock.now += 5_000;
  await b.succeeded('t1'); // node b never saw a failure, but tells the store once per refresh
  t.notOk(s.since.has('t1'));
  clock.now += 6_000;
  t.equal(await a.failed('t1'), false, 'node a re-reads the store: the streak restarted');
  t.equal(a.since('t1'), 11_000);
  await b.succeeded('t1');
  await b.succeeded('t1');
  t.equal(s.calls.filter((c) => c.startsWith('healthy')).length, 2, 'a healthy node writes at most once per refresh interval');
});

t.test('before answering yes the store is asked again: a streak reset elsewhere does not disable', async (t) => {
  const clock = { now: 0 };
  const s = store(clock);
  const streaks = new FailureStreaks(s, 10_000, 60_000, () => clock.now);
  await streaks.failed('t1');
  clock.now += 11_000;
  s.since.delete('t1'); // another node disabled and the operator re-enabled it, or it succeeded there
  t.equal(await streaks.failed('t1'), false, 'the cached start was stale');
  t.equal(streaks.since('t1'), 11_000);
  streaks.forget('t1');
  t.equal(streaks.since('t1'), null);
});
