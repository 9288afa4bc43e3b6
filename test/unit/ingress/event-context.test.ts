import t from 'tap';
import { checkContextValue, contextFromHeaders } from '../../../src/ingress/event-context.js';
import { ServiceError } from '../../../src/errors.js';

const LIMIT = 255; // docs/api.md#configuration-api: key limits 255 bytes

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof ServiceError ? err.code : `not a ServiceError: ${String(err)}`;
  }
}

// [header, code prefix as docs/api.md#errors names it]
const FIELDS: Array<[string, string]> = [
  ['x-service-event-type', 'context_event_type_key'],
  ['x-service-group-key', 'context_group_key'],
  ['x-service-partition-key', 'context_partition_key'],
];

t.test('reads type, group key and partition key from the default headers', async (t) => {
  const ctx = contextFromHeaders(
    { 'x-service-event-type': 'order.created', 'x-service-group-key': 'acme', 'x-service-partition-key': 'order-42', 'x-other': 'x' },
    LIMIT,
  );
  t.same(ctx, { eventType: 'order.created', groupKey: 'acme', partitionKey: 'order-42' });
});

t.test('absent headers give null', async (t) => {
  t.same(contextFromHeaders({}, LIMIT), { eventType: null, groupKey: null, partitionKey: null });
  t.same(contextFromHeaders({ 'x-service-group-key': 'g' }, LIMIT), { eventType: null, groupKey: 'g', partitionKey: null });
});

t.test('control characters give the field-specific _invalid code (400)', async (t) => {
  for (const [header, code] of FIELDS) {
    for (const bad of ['a\u0000b', 'a\nb', 'a\rb', '\t', 'a\u001fb', 'a\u007fb', 'a\u0085b', 'a\u009fb']) {
      const got = codeOf(() => contextFromHeaders({ [header]: bad }, LIMIT));
      t.equal(got, `${code}_invalid`, `${header} = ${JSON.stringify(bad)}`);
    }
    try {
      contextFromHeaders({ [header]: 'a\nb' }, LIMIT);
    } catch (err) {
      t.equal((err as ServiceError).status, 400);
    }
  }
});

t.test('printable non-ASCII is fine', async (t) => {
  t.same(contextFromHeaders({ 'x-service-group-key': 'café – 東京 🚀' }, LIMIT).groupKey, 'café – 東京 🚀');
});

t.test('the limit counts UTF-8 bytes, not characters', async (t) => {
  for (const [header, code] of FIELDS) {
    t.equal(codeOf(() => contextFromHeaders({ [header]: 'a'.repeat(255) }, LIMIT)), null, `${header}: 255 ASCII bytes ok`);
    t.equal(codeOf(() => contextFromHeaders({ [header]: 'a'.repeat(256) }, LIMIT)), `${code}_too_long`, `${header}: 256 bytes`);
    // 'é' is 2 bytes in UTF-8: 128 of them are 128 characters but 256 bytes.
    t.equal(codeOf(() => contextFromHeaders({ [header]: 'é'.repeat(128) }, LIMIT)), `${code}_too_long`, `${header}: 128 × é`);
    t.equal(codeOf(() => contextFromHeaders({ [header]: `${'é'.repeat(127)}a` }, LIMIT)), null, `${header}: 127 × é + a = 255 bytes`);
  }
});

t.test('checkContextValue honours the configured limit', async (t) => {
  t.equal(codeOf(() => checkContextValue('group', 'abcd', 4)), null);
  t.equal(codeOf(() => checkContextValue('group', 'abcde', 4)), 'context_group_key_too_long');
  t.equal(codeOf(() => checkContextValue('event_type', 'abcde', 4)), 'context_event_type_key_too_long');
  t.equal(codeOf(() => checkContextValue('partition', 'abcde', 4)), 'context_partition_key_too_long');
});

t.test('an empty context header counts as absent', async (t) => {
  const ctx = contextFromHeaders({ 'x-service-group-key': '', 'x-service-partition-key': '', 'x-service-event-type': '' }, LIMIT);
  t.same(ctx, { eventType: null, groupKey: null, partitionKey: null });
});

t.test('too-long messages name the key', async (t) => {
  try {
    checkContextValue('group', 'x'.repeat(LIMIT + 1), LIMIT);
    t.fail('should throw');
  } catch (err) {
    t.match((err as Error).message, /group key/);
  }
});
