import t from 'tap';
import { segmentMs } from '../../../../src/event-log/kafka/kafka-topic.js';

// What the broker keeps is up to retention + one segment: segments a tenth of
// the retention, from a minute (tests, soaks) to a week (Kafka's default).
t.test('a tenth of the retention, within a minute and a week', async (t) => {
  t.equal(segmentMs(30 * 86_400_000), 3 * 86_400_000, '30 days: 3-day segments');
  t.equal(segmentMs(180_000), 60_000, '3 minutes: one-minute segments, not 18 s');
  t.equal(segmentMs(18_000), 60_000, '18 s: a minute');
  t.equal(segmentMs(365 * 86_400_000), 7 * 86_400_000, 'a year: a week, as Kafka by default');
  t.equal(segmentMs(3_600_000), 360_000, 'an hour: 6 minutes');
});
