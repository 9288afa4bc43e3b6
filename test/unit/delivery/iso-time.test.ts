import fc from 'fast-check';
import t from 'tap';
import { isoAt } from '../../../src/delivery/iso-time.js';

t.test('the same string as toISOString', async (t) => {
  for (const ms of [0, 1, 9, 10, 99, 100, 999, 1000, 1001, Date.UTC(2026, 10, 21, 8, 59, 59, 999), Date.UTC(2026, 10, 21, 9, 0, 0, 7), 253_402_300_799_999]) {
    t.equal(isoAt(ms), new Date(ms).toISOString(), String(ms));
  }
  fc.assert(fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => isoAt(ms) === new Date(ms).toISOString()));
  // Runs of stamps within one second and across seconds, as a lane produces them.
  let ms = Date.UTC(2026, 0, 1) - 5;
  for (let i = 0; i < 5000; i++, ms += 7) if (isoAt(ms) !== new Date(ms).toISOString()) t.fail(String(ms));
});

t.test('beyond four-digit years and non-integers it is toISOString itself', async (t) => {
  for (const ms of [-1, -62_198_755_200_000, 253_402_300_800_000, 1.5]) t.equal(isoAt(ms), new Date(ms).toISOString(), String(ms));
  t.throws(() => isoAt(Number.NaN), RangeError, 'an invalid time throws as toISOString does');
});
