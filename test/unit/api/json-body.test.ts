import t from 'tap';
import Type from 'typebox';
import { checkBody, checkBodyWithRules, Problems } from '../../../src/api/json-body.js';
import { ServiceError, type FieldProblem } from '../../../src/errors.js';
import { compileBody } from '../../../src/schema/body-validator.js';
import { closed, maybe } from '../../../src/schema/schema-kit.js';

const check = compileBody(closed({ url: Type.String({ maxLength: 10 }), header: maybe(Type.String()), count: maybe(Type.Integer({ minimum: 0, maximum: 3 })) }));

/** The validation_failed details a call throws, or null when it does not throw. */
function thrown(fn: () => unknown): FieldProblem[] | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    if (err.code !== 'validation_failed' || err.status !== 400) throw new Error(`unexpected ${err.code}`);
    t.match(err.message, /^The request is not valid: /, 'the message lists the problems');
    return err.details as FieldProblem[];
  }
}
const fields = (problems: FieldProblem[] | null) => (problems ?? []).map((p) => p.field).sort();
// A rule the schema cannot say: the header may not be "Cookie".
const rules = (body: { header?: string | null }, problems: Problems) => {
  if (body.header?.toLowerCase() === 'cookie') problems.add('header', 'can never be forwarded');
  return body;
};

t.test('checkBody: the typed body, or every problem at once', async (t) => {
  t.same(checkBody({ url: 'u', count: null }, check), { url: 'u', count: null });
  t.same(fields(thrown(() => checkBody({ count: 9, extra: 1 }, check))), ['count', 'extra', 'url']);
});

t.test('checkBodyWithRules: rules run on a valid body', async (t) => {
  t.same(checkBodyWithRules({ url: 'u', header: 'X-A' }, check, rules), { url: 'u', header: 'X-A' });
  t.same(thrown(() => checkBodyWithRules({ url: 'u', header: 'Cookie' }, check, rules)), [{ field: 'header', problem: 'can never be forwarded' }]);
});

t.test('checkBodyWithRules: shape problems and rule problems come in one answer', async (t) => {
  t.same(fields(thrown(() => checkBodyWithRules({ url: 'u', header: 'Cookie', count: 7 }, check, rules))), ['count', 'header']);
  t.same(fields(thrown(() => checkBodyWithRules({ url: 42, header: 'Cookie' }, check, rules))), ['header', 'url'], 'a broken required field does not hide the rules');
  t.same(fields(thrown(() => checkBodyWithRules({ header: 5 }, check, rules))), ['header', 'url'], 'a field broken in shape is named once, by the schema');
});

t.test('Problems collects and throws once', async (t) => {
  const problems = new Problems();
  problems.throwIfAny();
  problems.add('a', 'is bad');
  problems.add('b', 'is worse');
  t.same(fields(thrown(() => problems.throwIfAny())), ['a', 'b']);
});
