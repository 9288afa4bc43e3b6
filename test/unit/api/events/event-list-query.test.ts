import t from 'tap';
import { ServiceError } from '../../../../src/errors.js';
import { decodeCursor, encodeCursor, parseIsoTime, readEventListQuery } from '../../../../src/api/events/event-list-query.js';

const problems = (query: string): Array<{ field: string; problem: string }> => {
  try {
    readEventListQuery(query);
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'validation_failed') return err.details as Array<{ field: string; problem: string }>;
    throw err;
  }
  throw new Error(`accepted: ${query}`);
};

t.test('every filter is read, the page defaults to 50', async (t) => {
  t.same(readEventListQuery(''), { limit: 50 });
  const q = readEventListQuery('status=failed&target=hooks&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00.5%2B01:00&eventType=order.paid&partitionKey=c%201&limit=100');
  t.same(q, {
    limit: 100,
    status: 'failed',
    target: 'hooks',
    from: new Date('2026-01-01T00:00:00Z'),
    to: new Date('2026-01-01T23:00:00.500Z'),
    eventType: 'order.paid',
    partitionKey: 'c 1',
  });
});

t.test('bad parameters are named, all at once, as validation_failed', async (t) => {
  t.same(problems('status=lost&limit=0&from=yesterday').map((p) => p.field), ['status', 'from', 'limit']);
  t.same(problems('limit=101').map((p) => p.field), ['limit']);
  t.same(problems('limit=1.5').map((p) => p.field), ['limit']);
  t.same(problems('stauts=failed').map((p) => `${p.field}: ${p.problem}`), ['stauts: unknown parameter']);
  t.same(problems('status=failed&status=delivered').map((p) => p.problem), ['given more than once']);
  t.same(problems('from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z').map((p) => p.field), ['to']);
  t.same(problems('target=').map((p) => p.field), ['target']);
  t.same(problems('cursor=not-ours').map((p) => p.field), ['cursor']);
});

t.test('times need a date, a time and a zone', async (t) => {
  t.equal(parseIsoTime('2026-03-01T10:00:00Z')?.toISOString(), '2026-03-01T10:00:00.000Z');
  t.equal(parseIsoTime('2026-03-01T10:00+02:00')?.toISOString(), '2026-03-01T08:00:00.000Z');
  for (const bad of ['2026', '2026-03-01', '2026-03-01T10:00:00', 'March 1 2026', '2026-13-01T10:00:00Z']) t.equal(parseIsoTime(bad), null, bad);
});

t.test('a cursor round-trips its position; anything else is refused', async (t) => {
  const position = { receivedAt: '2026-03-01T10:00:00.123456Z', eventId: 'evt_AZSx1v8uAAAAAAAAAAAAAAAA' };
  const cursor = encodeCursor(position);
  t.match(cursor, /^[A-Za-z0-9_-]+$/, 'URL-safe');
  t.same(decodeCursor(cursor), position);
  t.same(readEventListQuery(`cursor=${cursor}`).after, position);
  const forge = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  t.equal(decodeCursor(forge(['2026-03-01T10:00:00Z', position.eventId])), null, 'time not in the server\'s form');
  t.equal(decodeCursor(forge([position.receivedAt, "evt_x' OR 1=1 --"])), null, 'not an event id');
  t.equal(decodeCursor(forge({ receivedAt: position.receivedAt, eventId: position.eventId })), null);
  t.equal(decodeCursor('%%%'), null);
});
