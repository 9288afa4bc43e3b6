import t from 'tap';
import { outboundHeaders } from '../../../../src/delivery/http/outbound-headers.js';
import type { EventRecord } from '../../../../src/event-log/event-record.js';

const record = (over: Partial<EventRecord> = {}): EventRecord => ({
  v: 1, id: 'evt_h', tenantPublicId: 'ten_t', workspaceId: '1', queueId: '2', queueName: 'orders', receivedAt: 0,
  contentType: 'application/json', idempotencyKey: null, eventType: null, groupKey: null, partitionKey: null, path: null,
  body: Buffer.alloc(0), ...over,
});

t.test('precedence, lowest first: mapped and group key < the service\'s own < static', async (t) => {
  const h = outboundHeaders(
    record({ mappedHeaders: [['X-A', 'mapped'], ['X-B', 'mapped'], ['X-Service-Path', 'forged'], ['Content-Type', 'text/forged']], groupKey: 'g', idempotencyKey: 'i', eventType: 'e' }),
    { staticHeaders: { 'X-B': 'static', 'X-Group': 'static' }, groupKeyHeader: 'x-group' },
  );
  t.equal(h['x-a'], 'mapped');
  t.equal(h['x-b'], 'static', 'static beats mapped');
  t.equal(h['x-group'], 'static', 'static beats the group key header');
  t.equal(h['x-service-path'], 'sg:ten_t/orders', 'own beats mapped');
  t.equal(h['content-type'], 'application/json');
  t.equal(h['idempotency-key'], 'i');
  t.equal(h['x-service-event-type'], 'e');
  t.equal(h['x-service-event-id'], 'evt_h');
});

t.test('never-forwardable names and unsendable values are dropped', async (t) => {
  const h = outboundHeaders(record({ mappedHeaders: [['Cookie', 'c'], ['X-Idempotency-Key', 'x'], ['X-Ok', 'fine'], ['X-Bad', 'a\r\nb'], ['X-Wide', 'snow ☃']] }), { staticHeaders: {} });
  t.same(Object.keys(h).filter((k) => k.startsWith('x-') && !k.startsWith('x-service-')), ['x-ok']);
  t.notOk(h.cookie);
  t.notOk(h['idempotency-key'], 'no Idempotency-Key when the event has none');
});

t.test('X-Service-Path: this service\'s segment is appended to the chain received', async (t) => {
  t.equal(outboundHeaders(record({ path: 'a,b' }), { staticHeaders: {} })['x-service-path'], 'a,b,sg:ten_t/orders');
  t.equal(outboundHeaders(record({ contentType: null }), { staticHeaders: {} })['content-type'], 'application/octet-stream');
});
