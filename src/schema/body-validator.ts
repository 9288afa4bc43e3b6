import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Static, TSchema } from 'typebox';
import type { FieldProblem } from '../errors.js';
import { problemsOf, setFormatWords } from './schema-problems.js';

/*
 * One validator for every body schema. ajv compiles each schema once (at
 * start-up, when an API module builds its validators) into a function;
 * allErrors so one answer names every bad field; discriminator so a tagged
 * union ({ mode: "bearer", … }) reports the problems of the branch its tag
 * chose, not of every branch.
 */
const ajv = new Ajv2020({ allErrors: true, strict: true, discriminator: true, verbose: false });
// Our wording for a node's problems (schema-kit.ts withProblem); no effect on validity.
ajv.addKeyword({ keyword: 'x-problem', schemaType: 'string' });

/**
 * A named string format (`{ type: "string", format: name }`) whose check is
 * ours, e.g. an IP address or CIDR. Register before compiling a schema that
 * uses it; OpenAPI readers see the name. `words` name what a valid value is
 * ("a CIDR such as 10.0.0.0/8"): a bad value's problem is "must be <words>"
 * (without them, "is not a valid <name>"). The first registration of a name
 * is the one that counts: give a different check a different name.
 */
export function registerFormat(name: string, test: (value: string) => boolean, words?: string): void {
  if (ajv.formats[name]) return;
  ajv.addFormat(name, { type: 'string', validate: test });
  if (words !== undefined) setFormatWords(name, words);
}

export type Checked<S extends TSchema> = { ok: true; value: Static<S> } | { ok: false; problems: FieldProblem[] };

/**
 * A compiled body schema: call it to check a value. It keeps its schema, so a
 * route registered with it (RouteOptions.body) can be compared with what the
 * OpenAPI document says that route takes.
 */
export interface BodyCheck<S extends TSchema = TSchema> {
  (value: unknown): Checked<S>;
  readonly schema: S;
}

/** A validator for `schema`: the value typed as the schema says, or every problem in our words. */
export function compileBody<S extends TSchema>(schema: S): BodyCheck<S> {
  const validate = ajv.compile(schema as object);
  const check = (value: unknown): Checked<S> => {
    if (validate(value)) return { ok: true, value: value as Static<S> };
    return { ok: false, problems: problemsOf(schema, validate.errors ?? []) };
  };
  return Object.assign(check, { schema });
}
