/**
 * Route patterns: segments compare literally, `:name` takes any one non-empty
 * segment (its value is a route parameter, still percent-encoded) and a final
 * `*` takes the rest of the path, nothing included.
 */

/** Whether a request path falls under a route pattern (the 405 answer: which methods a path is served with). */
export function matchesPattern(pattern: string, path: string): boolean {
  const want = pattern.split('/');
  const have = path.split('/');
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment === '*' && i === want.length - 1) return true;
    const got = have[i];
    if (got === undefined) return false;
    if (segment.startsWith(':')) {
      if (got === '') return false;
    } else if (segment !== got) {
      return false;
    }
  }
  return have.length === want.length;
}

interface RouteNode<T> {
  literal: Map<string, RouteNode<T>>;
  param: RouteNode<T> | null;
  /** What a final `*` here takes. */
  rest: T | null;
  /** What a path ending here takes. */
  value: T | null;
}

const node = <T>(): RouteNode<T> => ({ literal: new Map(), param: null, rest: null, value: null });

/**
 * The routes of one method as a tree of segments. The most specific pattern
 * wins whatever the order routes were added in: at each segment a literal is
 * tried before a parameter, and a parameter before a final `*`; a branch that
 * leads nowhere is left for the next (`/events/sandbox/q` is the parameter
 * route when the sandbox route needs one more segment).
 */
export class RouteTree<T> {
  private readonly root = node<T>();

  add(pattern: string, value: T): void {
    const segments = pattern.split('/');
    let at = this.root;
    for (let i = 1; i < segments.length; i++) {
      const segment = segments[i]!;
      if (segment === '*' && i === segments.length - 1) {
        at.rest = value;
        return;
      }
      if (segment.startsWith(':')) at = at.param ??= node();
      else {
        let next = at.literal.get(segment);
        if (!next) at.literal.set(segment, (next = node()));
        at = next;
      }
    }
    at.value = value;
  }

  /** The value of the route `path` falls under, its parameters pushed onto `params`; null when none. */
  find(path: string, params: string[]): T | null {
    if (path.charCodeAt(0) !== 0x2f) return null;
    return this.walk(this.root, path, 1, params);
  }

  private walk(at: RouteNode<T>, path: string, from: number, params: string[]): T | null {
    // The path ends here; a final `*` takes nothing as well (as matchesPattern reads it).
    if (from > path.length) return at.value ?? at.rest;
    const slash = path.indexOf('/', from);
    const end = slash === -1 ? path.length : slash;
    const segment = path.slice(from, end);
    const literal = at.literal.get(segment);
    if (literal) {
      const found = this.walk(literal, path, end + 1, params);
      if (found !== null) return found;
    }
    if (at.param && segment !== '') {
      params.push(segment);
      const found = this.walk(at.param, path, end + 1, params);
      if (found !== null) return found;
      params.pop();
    }
    return at.rest;
  }
}
