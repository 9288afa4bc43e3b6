import type { Static, TSchema } from 'typebox';
import { ServiceError, type FieldProblem } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import type { BodyCheck } from '../schema/body-validator.js';

/** Reads a management request body as a JSON object (415 / 400 otherwise). */
export async function readJsonObject(exchange: Exchange): Promise<Record<string, unknown>> {
  const body = await exchange.body;
  if (body.length === 0) return {};
  const type = exchange.headers['content-type'] ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(type)) throw new ServiceError('unsupported_media_type');
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ServiceError('validation_failed', 'The body is not valid JSON.', [{ field: '(body)', problem: 'not valid JSON' }]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ServiceError('validation_failed', 'The body must be a JSON object.', [{ field: '(body)', problem: 'must be an object' }]);
  }
  return value as Record<string, unknown>;
}

/**
 * Reads a management request body and checks it against its schema (a
 * validator from compileBody): the typed body, or 400 validation_failed naming
 * every bad field. Rules the schema cannot say (a header name forwarding
 * forbids, a time range) are checked after, with Problems.
 */
export async function readBody<S extends TSchema>(exchange: Exchange, check: BodyCheck<S>): Promise<Static<S>> {
  return checkBody(await readJsonObject(exchange), check);
}

/** checkBody for a body already read (the /waas bodies pass through their NUL check first). */
export function checkBody<S extends TSchema>(body: unknown, check: BodyCheck<S>): Static<S> {
  const checked = check(body);
  if (!checked.ok) throw invalid(checked.problems);
  return checked.value;
}

/**
 * The schema, then `rules` (what the schema cannot say) on the valid body,
 * with every problem named in one answer: when some fields break the schema,
 * the rules still run on the others (the body without the broken fields, if
 * that is valid), so a request with a bad type in one field and a forbidden
 * header name in another hears about both at once. On that second path a
 * required field that was broken is absent: a rule that reads one checks it
 * is there (its result is thrown away; only its problems count).
 */
export function checkBodyWithRules<S extends TSchema, T>(body: unknown, check: BodyCheck<S>, rules: (valid: Static<S>, problems: Problems) => T): T {
  const checked = check(body);
  const problems = new Problems();
  if (checked.ok) {
    const out = rules(checked.value, problems);
    problems.throwIfAny();
    return out;
  }
  problems.list.push(...checked.problems);
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const broken = new Set(checked.problems.map((p) => p.field.split(/[.[]/, 1)[0]!));
    const rest = Object.fromEntries(Object.entries(body).filter(([k]) => !broken.has(k)));
    const again = check(rest);
    // Missing only what was broken (a required field): the rest is valid, the rules can read it.
    if (again.ok || again.problems.every((p) => p.problem === 'is required' && broken.has(p.field))) {
      const ruled = new Problems();
      rules(rest as Static<S>, ruled);
      problems.list.push(...ruled.list.filter((p) => !broken.has(p.field.split(/[.[]/, 1)[0]!)));
    }
  }
  throw invalid(problems.list);
}

/** One validation_failed naming every problem. */
export function invalid(problems: readonly FieldProblem[]): ServiceError {
  const summary = problems.map((p) => `${p.field} ${p.problem}`).join('; ');
  return new ServiceError('validation_failed', `The request is not valid: ${summary}.`, [...problems]);
}

/** Problems found by the rules after the schema, thrown together as one validation_failed. */
export class Problems {
  readonly list: FieldProblem[] = [];

  add(field: string, problem: string): void {
    this.list.push({ field, problem });
  }

  /** Throws validation_failed naming every problem found so far. */
  throwIfAny(): void {
    if (this.list.length > 0) throw invalid(this.list);
  }
}
