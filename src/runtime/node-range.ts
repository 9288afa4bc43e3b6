/**
 * Whether a Node.js version is in a package.json `engines` range: enough of
 * semver's range syntax for that field (`^22.22.0 || >=24`, `>=20.12 <21`,
 * `~24.1`), so the launcher (src/cli.ts) needs no dependency to decide
 * whether to relaunch on a newer Node. No imports: the launcher loads this on
 * whatever Node the user has. Syntax it does not know throws, so a change to
 * `engines` that it cannot read fails test/unit/runtime.test.ts instead of
 * being misread.
 */
type Triple = [number, number, number];

function parse(text: string, what: string): { v: Triple; parts: number } {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?$/.exec(text);
  if (!m) throw new Error(`${what}: not a version: ${JSON.stringify(text)}`);
  const parts = m.slice(1).filter((p) => p !== undefined).length;
  return { v: [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)], parts };
}

function compare(a: Triple, b: Triple): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** One comparator (`>=24`, `^22.22.0`, `<23`) against a version. */
function test(version: Triple, comparator: string, range: string): boolean {
  const m = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(comparator)!;
  const op = m[1] ?? '=';
  const { v, parts } = parse(m[2]!, `engines range ${JSON.stringify(range)}`);
  const c = compare(version, v);
  switch (op) {
    case '>=':
      return c >= 0;
    case '>':
      return c > 0;
    case '<=':
      return c <= 0;
    case '<':
      return c < 0;
    case '=':
      if (parts < 3) throw new Error(`engines range ${JSON.stringify(range)}: a partial version without an operator is not supported`);
      return c === 0;
    case '^': {
      // Up to the next major (for 0.x: the next minor), as npm reads it.
      const upper: Triple = v[0] > 0 ? [v[0] + 1, 0, 0] : [0, v[1] + 1, 0];
      return c >= 0 && compare(version, upper) < 0;
    }
    default: // '~': up to the next minor (a major alone: the next major)
      return c >= 0 && compare(version, parts > 1 ? [v[0], v[1] + 1, 0] : [v[0] + 1, 0, 0]) < 0;
  }
}

export function satisfies(version: string, range: string): boolean {
  const { v } = parse(version.trim(), 'version');
  // Every alternative is read, not only up to the first match: bad syntax anywhere throws.
  const matches = range.split('||').map((set) => {
    const comparators = set.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    if (comparators.length === 0) throw new Error(`engines range ${JSON.stringify(range)}: an empty alternative`);
    return comparators.map((comparator) => test(v, comparator, range)).every(Boolean);
  });
  return matches.some(Boolean);
}
