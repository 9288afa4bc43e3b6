import t from 'tap';
import Type from 'typebox';
import { compileBody, registerFormat } from '../../../src/schema/body-validator.js';
import { closed, int, maybe, nullable, oneOf, withProblem } from '../../../src/schema/schema-kit.js';

registerFormat('even-length', (v) => v.length % 2 === 0);

const Shape = closed(
  {
    name: Type.String({ minLength: 1, maxLength: 5 }),
    count: maybe(int(1, 10)),
    colour: maybe(oneOf(['red', 'blue'] as const)),
    rate: Type.Optional(Type.Number({ minimum: 0.5, maximum: 2 })),
    tags: Type.Optional(Type.Array(Type.String({ format: 'even-length' }), { maxItems: 2 })),
    steps: Type.Optional(withProblem(Type.Array(int(0, 9), { minItems: 1 }), 'must be a list of digits')),
    headers: Type.Optional(Type.Record(Type.String(), withProblem(Type.String({ pattern: '^[a-z]*$' }), 'must be lower-case letters'))),
    nested: Type.Optional(closed({ list: Type.Array(closed({ as: Type.String() })) })),
    pick: Type.Optional(
      Type.Unsafe<{ kind: 'a'; a: string } | { kind: 'b' }>({
        type: 'object',
        discriminator: { propertyName: 'kind' },
        oneOf: [closed({ kind: Type.Literal('a'), a: Type.String() }), closed({ kind: Type.Literal('b') })],
      }),
    ),
  },
  { title: 'Shape' },
);
const check = compileBody(Shape);
const problems = (value: unknown) => {
  const checked = check(value);
  return checked.ok ? [] : checked.problems;
};

t.test('a valid body comes back typed, and the checker keeps its schema', async (t) => {
  const checked = check({ name: 'ab', count: null, colour: 'red', pick: { kind: 'b' } });
  t.ok(checked.ok);
  t.equal(check.schema, Shape);
});

t.test('each problem names its field in our words', async (t) => {
  t.same(problems({}), [{ field: 'name', problem: 'is required' }]);
  t.same(problems({ name: '', extra: 1 }), [
    { field: 'extra', problem: 'unknown field' },
    { field: 'name', problem: 'must not be empty' },
  ]);
  t.same(problems({ name: 'abcdef' }), [{ field: 'name', problem: 'must be at most 5 characters' }]);
  t.same(problems({ name: 'a', count: 11 }), [{ field: 'count', problem: 'must be an integer from 1 to 10' }]);
  t.same(problems({ name: 'a', count: 1.5 }), [{ field: 'count', problem: 'must be an integer' }]);
  t.same(problems({ name: 'a', count: 'x' }), [{ field: 'count', problem: 'must be an integer' }], 'nullable says the type, not "or null"');
  t.same(problems({ name: 'a', colour: 'green' }), [{ field: 'colour', problem: 'must be one of red, blue' }]);
  t.same(problems({ name: 'a', rate: 3 }), [{ field: 'rate', problem: 'must be a number from 0.5 to 2' }]);
  t.same(problems({ name: 'a', tags: ['ab', 'abc'] }), [{ field: 'tags[1]', problem: 'is not a valid even-length' }]);
  t.same(problems({ name: 'a', tags: 'ab' }), [{ field: 'tags', problem: 'must be a list' }]);
  t.same(problems({ name: 'a', nested: { list: [{ as: 'x' }, { as: 1 }] } }), [{ field: 'nested.list[1].as', problem: 'must be a string' }]);
  t.same(problems(null), [{ field: '(body)', problem: 'must be an object' }]);
});

t.test('a node with its own words is one problem, whatever broke inside it', async (t) => {
  t.same(problems({ name: 'a', steps: [1, 10, -1] }), [{ field: 'steps', problem: 'must be a list of digits' }]);
  t.same(problems({ name: 'a', steps: [] }), [{ field: 'steps', problem: 'must be a list of digits' }]);
  t.same(problems({ name: 'a', headers: { 'X-1': 'ok', 'X-2': 'NO', '12': 'NO' } }), [
    { field: 'headers.12', problem: 'must be lower-case letters' },
    { field: 'headers.X-2', problem: 'must be lower-case letters' },
  ], 'record keys stay names (even numeric ones), not indexes');
});

t.test('a tagged union reports the branch its tag chose', async (t) => {
  t.same(problems({ name: 'a', pick: { kind: 'a' } }), [{ field: 'pick.a', problem: 'is required' }]);
  t.same(problems({ name: 'a', pick: { kind: 'b', a: 'x' } }), [{ field: 'pick.a', problem: 'unknown field' }]);
  t.same(problems({ name: 'a', pick: { kind: 'c' } }), [{ field: 'pick.kind', problem: 'must be one of a, b' }]);
});

t.test('nullable keeps one type and adds null', async (t) => {
  t.same(nullable(Type.String({ maxLength: 2 })), { type: ['string', 'null'], maxLength: 2 });
  t.same(nullable(oneOf(['x'] as const)), { type: ['string', 'null'], enum: ['x', null] });
  t.throws(() => nullable(Type.Union([Type.String(), Type.Number()])), /single type/);
});
