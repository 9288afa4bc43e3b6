/**
 * Building blocks for the schemas of API bodies, on top of TypeBox. A TypeBox
 * schema is plain JSON Schema (draft 2020-12, what OpenAPI 3.1 embeds), so one
 * object serves three readers: the TypeScript type (`Static<typeof S>`), the
 * validator (src/schema/body-validator.ts) and the OpenAPI document
 * (src/api/openapi.ts puts it under components.schemas).
 */
import Type, { type Static, type TSchema, type TUnsafe } from 'typebox';

/**
 * `S` or JSON `null`. Request bodies treat null as "not given" (clients
 * serialise an unset field as null); written as a type list (`["string",
 * "null"]`) or an enum with null, not anyOf, so a bad value gets one problem
 * ("must be a string"), not one per branch.
 */
export function nullable<S extends TSchema>(schema: S): TUnsafe<Static<S> | null> {
  const node = { ...(schema as Record<string, unknown>) };
  if (typeof node.type !== 'string') throw new Error('nullable(): the schema needs a single type');
  node.type = [node.type, 'null'];
  if (Array.isArray(node.enum)) node.enum = [...(node.enum as unknown[]), null];
  return Type.Unsafe<Static<S> | null>(node);
}

/** An optional field that may also be null ("not given"). */
export function maybe<S extends TSchema>(schema: S) {
  return Type.Optional(nullable(schema));
}

/**
 * Words for a schema node: any violation at or below it is reported as one
 * problem on its field with this text, instead of the generic per-keyword
 * words. For compound shapes whose rule reads better whole ("a list of 1 to 50
 * integers from 0 to 604800").
 */
export function withProblem<S extends TSchema>(schema: S, problem: string): S {
  return { ...schema, 'x-problem': problem } as S;
}

/** A closed object: a field the schema does not name is "unknown field". */
export function closed<P extends Parameters<typeof Type.Object>[0]>(properties: P, options: { title?: string; description?: string } = {}) {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

/** One of the given strings. */
export function oneOf<const V extends readonly string[]>(values: V) {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values] });
}

/** A whole number in [min, max]. */
export function int(minimum: number, maximum: number) {
  return Type.Integer({ minimum, maximum });
}
