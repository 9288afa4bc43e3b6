/**
 * Whether a request path falls under a route pattern as uWebSockets.js reads
 * it: segments compare literally, `:name` takes any one non-empty segment and
 * a final `*` takes the rest. Used only for the 405 answer (which methods a
 * known path does serve), not for routing itself, which uWS does.
 */
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
