import t from 'tap';
import { dueForWarning, healthState } from '../../../../src/delivery/health/health-state.js';

const H = 3_600_000;
const thresholds = { warnAfterMs: 24 * H, disableAfterMs: 120 * H };
const at = (ms: number) => new Date(ms);
const now = 1_000 * H;

t.test('a target that never failed, or whose last attempt succeeded, is active', async (t) => {
  t.same(healthState({ disabledAt: null, failingSince: null }, thresholds, now), { state: 'active', warnsAt: null, disablesAt: null });
});

t.test('a failing target is failing until the warning threshold, then warning; both times are told', async (t) => {
  const since = now - 2 * H;
  const early = healthState({ disabledAt: null, failingSince: at(since) }, thresholds, now);
  t.equal(early.state, 'failing');
  t.same([early.warnsAt?.getTime(), early.disablesAt?.getTime()], [since + 24 * H, since + 120 * H]);
  t.equal(healthState({ disabledAt: null, failingSince: at(now - 24 * H + 1) }, thresholds, now).state, 'failing', 'a millisecond short');
  t.equal(healthState({ disabledAt: null, failingSince: at(now - 24 * H) }, thresholds, now).state, 'warning', 'at the threshold');
  t.equal(healthState({ disabledAt: null, failingSince: at(now - 119 * H) }, thresholds, now).state, 'warning');
});

t.test('disabled wins over any streak', async (t) => {
  t.equal(healthState({ disabledAt: at(now - H), failingSince: at(now - 200 * H) }, thresholds, now).state, 'disabled');
  t.equal(healthState({ disabledAt: at(now - H), failingSince: null }, thresholds, now).state, 'disabled');
});

t.test('a warning threshold at or past the disabling one never warns', async (t) => {
  const late = { warnAfterMs: 120 * H, disableAfterMs: 120 * H };
  const v = healthState({ disabledAt: null, failingSince: at(now - 119 * H) }, late, now);
  t.same([v.state, v.warnsAt], ['failing', null]);
  t.equal(dueForWarning(now - 200 * H, late, now), false);
});

t.test('a streak is due for its warning from the threshold on', async (t) => {
  t.equal(dueForWarning(now - 23 * H, thresholds, now), false);
  t.equal(dueForWarning(now - 24 * H, thresholds, now), true);
});
