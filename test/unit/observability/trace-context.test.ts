import t from 'tap';
import { formatTraceparent, spanContextOf, validTraceparent, validTracestate } from '../../../src/observability/trace-context.js';
import { decodeEvent, encodeEvent, type EventRecord } from '../../../src/event-log/event-record.js';
import { Packr } from 'msgpackr';

const GOOD = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

t.test('a version-00 traceparent is taken as it came', async (t) => {
  t.equal(validTraceparent(GOOD), GOOD);
  t.equal(validTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'), '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', 'not sampled is still valid');
  t.same(spanContextOf(GOOD), { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
  t.equal(formatTraceparent({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '1111111111111111', traceFlags: 1 }), '00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01');
  t.equal(formatTraceparent({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '1111111111111111', traceFlags: 0 }), '00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-00');
});

t.test('anything else is ignored (null), never an error', async (t) => {
  const bad = [
    undefined,
    '',
    GOOD.toUpperCase(), // upper-case hex
    GOOD.replace('00-4bf9', '01-4bf9'), // another version
    GOOD.replace(/^00/, 'ff'),
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // zero trace id
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // zero parent id
    `${GOOD}-extra`,
    ` ${GOOD}`,
    `${GOOD}, ${GOOD}`, // two headers joined
    '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', // short trace id
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1',
    '00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01',
    '00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01',
  ];
  for (const value of bad) t.equal(validTraceparent(value), null, JSON.stringify(value));
});

t.test('tracestate: kept when printable and within 512 characters', async (t) => {
  t.equal(validTracestate('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'), 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
  t.equal(validTracestate(undefined), null);
  t.equal(validTracestate('  '), null);
  t.equal(validTracestate('a=b\u0001'), null);
  t.equal(validTracestate(`a=${'x'.repeat(600)}`), null);
});

t.test('event records: the trace fields round-trip, and a record without them (written before) still decodes', async (t) => {
  const record: EventRecord = {
    v: 1, id: 'evt_1', tenantPublicId: 'ten_1', workspaceId: '1', queueId: '2', queueName: 'q', receivedAt: 1_700_000_000_000,
    contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: null, path: null,
    body: Buffer.from('{}'),
  };
  const old = decodeEvent(encodeEvent({ ...record }));
  t.equal(old.traceparent, undefined);
  t.equal(old.tracestate, undefined);
  // A record as the previous release wrote it (msgpackr, no trace fields).
  const legacy = new Packr({ useRecords: false, moreTypes: false }).pack({ ...record });
  t.equal(decodeEvent(legacy).id, 'evt_1');
  const traced = decodeEvent(encodeEvent({ ...record, traceparent: GOOD, tracestate: 'rojo=1' }));
  t.equal(traced.traceparent, GOOD);
  t.equal(traced.tracestate, 'rojo=1');
});
