import type { ErrorObject } from 'ajv';
import type { FieldProblem } from '../errors.js';

type Node = Record<string, unknown>;

/*
 * ajv reports each violation as (instancePath, schemaPath, keyword). A user
 * reads a field name and a sentence, so each error becomes { field, problem }:
 *
 *   instancePath /mappedHeaders/0/as           → field "mappedHeaders[0].as"
 *   keyword maximum under { type: integer,
 *     minimum: 1, maximum: 100 }               → "must be an integer from 1 to 100"
 *   a node marked x-problem on the way down    → that node's field and words
 *
 * Walking the schemaPath from the root finds the schema node of every step,
 * which is how the words know the bounds and how x-problem is found; the
 * steps that descend into the value (properties/x, items, …) say which part
 * of the instance path names that node.
 */
export function problemsOf(root: unknown, errors: readonly ErrorObject[]): FieldProblem[] {
  const out: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const problem = describe(root as Node, error);
    if (problem === null) continue;
    // A marked node turns all the errors below it into the same sentence: say it once.
    const key = `${problem.field}\u0000${problem.problem}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(problem);
  }
  return out;
}

/** What a value of a named format is ("a CIDR such as 10.0.0.0/8"), from registerFormat. */
const FORMAT_WORDS = new Map<string, string>();

/** A bad value of format `name` is then "must be <words>". */
export function setFormatWords(name: string, words: string): void {
  FORMAT_WORDS.set(name, words);
}

/** The instance segments a schema step consumes: properties/x, items, … descend into the value. */
const DESCENDS: Record<string, 'named' | 'indexed' | 'next'> = {
  properties: 'named',
  patternProperties: 'named',
  prefixItems: 'indexed',
  items: 'next',
  additionalProperties: 'next',
};

function describe(root: Node, error: ErrorObject): FieldProblem | null {
  // schemaPath is a URI fragment (a pattern key such as ^.*$ arrives as %5E.*%24); instancePath a bare JSON pointer.
  const steps = error.schemaPath.replace(/^#\/?/, '').split('/').filter((s) => s.length > 0).map((s) => unescape(safeDecode(s)));
  const values = error.instancePath.split('/').slice(1).map(unescape);
  let node: Node = root;
  // The field so far: one part per step that descended into the value.
  const parts: Array<{ name: string; indexed: boolean }> = [];
  let marked: { words: string; depth: number } | null = typeof root['x-problem'] === 'string' ? { words: root['x-problem'], depth: 0 } : null;
  // The last step is the keyword itself; the node holding it is where the walk stops.
  for (let i = 0; i < steps.length - 1; i++) {
    const step = steps[i]!;
    const mode = DESCENDS[step];
    let child: unknown;
    if (mode === 'named' || mode === 'indexed') {
      child = (node[step] as Node | undefined)?.[steps[++i]!];
      parts.push({ name: values[parts.length] ?? '?', indexed: mode === 'indexed' });
    } else if (mode === 'next') {
      child = node[step];
      parts.push({ name: values[parts.length] ?? '?', indexed: step === 'items' });
    } else if (step === 'anyOf' || step === 'oneOf' || step === 'allOf') {
      child = (node[step] as Node[] | undefined)?.[Number(steps[++i])];
    } else {
      child = node[step];
    }
    if (typeof child !== 'object' || child === null) break;
    node = child as Node;
    if (typeof node['x-problem'] === 'string') marked = { words: node['x-problem'], depth: parts.length };
  }
  if (marked) return { field: fieldName(parts.slice(0, marked.depth)), problem: marked.words };
  const field = fieldName(parts);
  const at = (name: string) => (field === '(body)' ? name : `${field}.${name}`);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { field: at(String(p.missingProperty)), problem: 'is required' };
    case 'additionalProperties':
      return { field: at(String(p.additionalProperty)), problem: 'unknown field' };
    case 'discriminator':
      return { field: at(String(p.tag)), problem: `must be one of ${mappingOf(node, String(p.tag)).join(', ')}` };
    default:
      return { field, problem: words(error.keyword, p, node) };
  }
}

/** The parts of a field → `a.b[0].c` ("(body)" for the body itself). */
function fieldName(parts: ReadonlyArray<{ name: string; indexed: boolean }>): string {
  if (parts.length === 0) return '(body)';
  let out = '';
  for (const part of parts) out += part.indexed ? `[${part.name}]` : out === '' ? part.name : `.${part.name}`;
  return out;
}

function words(keyword: string, p: Record<string, unknown>, node: Node): string {
  switch (keyword) {
    case 'type':
      return `must be ${typeWords(p.type)}`;
    case 'enum':
      // '' is a value too (e.g. "no mechanism"): shown as "", not as nothing between two commas.
      return `must be one of ${(node.enum as unknown[]).filter((v) => v !== null).map((v) => (v === '' ? '""' : String(v))).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(node.const)}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return rangeWords(node);
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'pattern':
      return 'has an invalid format';
    case 'format': {
      const what = FORMAT_WORDS.get(String(p.format));
      return what === undefined ? `is not a valid ${String(p.format)}` : `must be ${what}`;
    }
    case 'minItems':
      return `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'uniqueItems':
      return 'must not list an item twice';
    default:
      return `is not valid (${keyword})`;
  }
}

function typeWords(type: unknown): string {
  const first = (Array.isArray(type) ? type : String(type).split(',')).find((t) => t !== 'null');
  switch (first) {
    case 'string':
      return 'a string';
    case 'integer':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'object':
      return 'an object';
    case 'array':
      return 'a list';
    default:
      return String(first);
  }
}

function rangeWords(node: Node): string {
  const kind = [node.type].flat().includes('integer') ? 'an integer' : 'a number';
  const min = node.minimum ?? node.exclusiveMinimum;
  const max = node.maximum ?? node.exclusiveMaximum;
  if (min !== undefined && max !== undefined) return `must be ${kind} from ${String(min)} to ${String(max)}`;
  if (min !== undefined) return `must be ${kind} of at least ${String(min)}`;
  return `must be ${kind} of at most ${String(max)}`;
}

/** The tag values of a discriminated oneOf: each branch's const. */
function mappingOf(node: Node, tag: string): string[] {
  const branches = (node.oneOf as Node[] | undefined) ?? [];
  return branches.map((b) => String(((b.properties as Node | undefined)?.[tag] as Node | undefined)?.const ?? '?'));
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function unescape(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
