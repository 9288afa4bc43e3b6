import t from 'tap';
import { FieldReader } from '../../../src/api/json-body.js';
import { ServiceError, type FieldProblem } from '../../../src/errors.js';

/** The problems done() reports, or null when it does not throw. */
function doneProblems(reader: FieldReader): FieldProblem[] | null {
  try {
    reader.done();
    return null;
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    if (err.code !== 'validation_failed' || err.status !== 400) throw new Error(`unexpected ${err.code}`);
    return err.details as FieldProblem[];
  }
}
const fields = (problems: FieldProblem[] | null) => (problems ?? []).map((p) => p.field).sort();

t.test('a valid body reads through and done() passes', async (t) => {
  const r = new FieldReader({ name: 'orders', enabled: true, retries: 3, mode: 'hmac', tags: ['a', 'b'] }, ['name', 'enabled', 'retries', 'mode', 'tags']);
  t.equal(r.string('name', { required: true, max: 10, pattern: /^[a-z]+$/ }), 'orders');
  t.equal(r.boolean('enabled', { required: true }), true);
  t.equal(r.integer('retries', 0, 10), 3);
  t.equal(r.oneOf('mode', ['none', 'hmac'] as const), 'hmac');
  t.same(r.stringList('tags', { max: 5 }), ['a', 'b']);
  t.equal(doneProblems(r), null);
});

t.test('unknown fields are reported', async (t) => {
  const r = new FieldReader({ name: 'x', nmae: 'typo', extra: 1 }, ['name']);
  t.same(fields(doneProblems(r)), ['extra', 'nmae']);
});

t.test('required fields: absent or null', async (t) => {
  const r = new FieldReader({ enabled: null }, ['name', 'enabled']);
  t.equal(r.string('name', { required: true }), undefined);
  t.equal(r.boolean('enabled', { required: true }), undefined);
  t.same(fields(doneProblems(r)), ['enabled', 'name']);
});

t.test('optional fields may be absent', async (t) => {
  const r = new FieldReader({}, ['name', 'enabled', 'n', 'mode', 'list']);
  t.equal(r.string('name'), undefined);
  t.equal(r.boolean('enabled'), undefined);
  t.equal(r.integer('n', 0, 5), undefined);
  t.equal(r.oneOf('mode', ['a']), undefined);
  t.equal(r.stringList('list'), undefined);
  t.equal(doneProblems(r), null);
});

t.test('wrong types are reported per field', async (t) => {
  const body = { s: 5, b: 'true', i: 1.5, o: 'c', l: ['a', 2] };
  const r = new FieldReader(body, Object.keys(body));
  t.equal(r.string('s'), undefined);
  t.equal(r.boolean('b'), undefined);
  t.equal(r.integer('i', 0, 10), undefined);
  t.equal(r.oneOf('o', ['a', 'b']), undefined);
  t.equal(r.stringList('l'), undefined);
  t.same(fields(doneProblems(r)), ['b', 'i', 'l', 'o', 's']);
});

t.test('bounds: max length, pattern, integer range, list size', async (t) => {
  const body = { long: 'abcdef', pat: 'ABC', low: -1, high: 11, nonnum: '3', list: ['a', 'b', 'c'], notList: 'a' };
  const r = new FieldReader(body, Object.keys(body));
  r.string('long', { max: 5 });
  r.string('pat', { pattern: /^[a-z]+$/ });
  r.integer('low', 0, 10);
  r.integer('high', 0, 10);
  r.integer('nonnum', 0, 10);
  r.stringList('list', { max: 2 });
  r.stringList('notList');
  t.same(fields(doneProblems(r)), ['high', 'list', 'long', 'low', 'nonnum', 'notList', 'pat']);
  const ok = new FieldReader({ edge: 10, s: 'abcde' }, ['edge', 's']);
  t.equal(ok.integer('edge', 0, 10), 10, 'range is inclusive');
  t.equal(ok.string('s', { max: 5 }), 'abcde', 'max is inclusive');
  t.equal(doneProblems(ok), null);
});

t.test('done() lists every problem at once, each with field and problem text', async (t) => {
  const r = new FieldReader({ bogus: 1, url: 42 }, ['url', 'name']);
  r.string('url', { required: true });
  r.string('name', { required: true });
  r.problem('headers', 'collides with X-Service-Event-Id');
  const problems = doneProblems(r);
  t.same(fields(problems), ['bogus', 'headers', 'name', 'url']);
  for (const p of problems ?? []) t.ok(typeof p.problem === 'string' && p.problem.length > 0, `${p.field} has a problem text`);
  try {
    r.done();
  } catch (err) {
    const message = (err as Error).message;
    for (const f of ['bogus', 'headers', 'name', 'url']) t.ok(message.includes(f), `message mentions ${f}`);
  }
});
