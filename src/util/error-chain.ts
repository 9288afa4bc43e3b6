/**
 * Walking what a library throws: an error, the errors it groups (`errors`:
 * AggregateError, the Kafka client's MultipleErrors, a multi-address connect)
 * and its `cause`, depth first, each group in order. The one walker of cause
 * chains: Kafka, Postgres and delivery failures are read through it.
 */

/** The fields of a thrown value this module reads. */
export interface ErrorNode {
  message?: unknown;
  code?: unknown;
  errors?: unknown;
  cause?: unknown;
}

/** The errors `err` groups and its cause, in that order (empty for a leaf or a non-object). */
export function childrenOf(err: unknown): unknown[] {
  if (!err || typeof err !== 'object') return [];
  const node = err as ErrorNode;
  const children = Array.isArray(node.errors) ? [...(node.errors as unknown[])] : [];
  if (node.cause !== undefined && node.cause !== null) children.push(node.cause);
  return children;
}

/**
 * Every object in `err`'s tree, depth first, `err` itself first; at most
 * `maxDepth` levels down, each object once (a cause loop ends the walk).
 */
export function* errorChain<T extends object = ErrorNode>(err: unknown, maxDepth = 8): Generator<T> {
  const seen = new Set<object>();
  function* visit(node: unknown, depth: number): Generator<T> {
    if (!node || typeof node !== 'object' || depth > maxDepth || seen.has(node)) return;
    seen.add(node);
    yield node as T;
    for (const child of childrenOf(node)) yield* visit(child, depth + 1);
  }
  yield* visit(err, 0);
}

/** The string `code`s in `err`'s tree, in walk order. */
export function errorCodes(err: unknown, maxDepth = 8): string[] {
  const codes: string[] = [];
  for (const node of errorChain(err, maxDepth)) if (typeof node.code === 'string') codes.push(node.code);
  return codes;
}
