import t from 'tap';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

/**
 * No import cycle in src/, type-only imports included: a cycle means two
 * folders that each need the other, which the tree is laid out to avoid
 * (docs/architecture.md). madge reads the imports as TypeScript resolves them.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));

t.test('src/ has no import cycle', async (t) => {
  const graph = await madge(`${root}src`, { fileExtensions: ['ts'], tsConfig: `${root}tsconfig.json` });
  const files = Object.keys(graph.obj());
  t.ok(files.length > 200, `the whole tree was read (${files.length} files)`);
  t.ok(files.includes('node/node.ts') && (graph.obj()['node/node.ts'] ?? []).length > 10, 'imports were resolved (node.ts imports its parts)');
  t.same(graph.circular(), [], 'no cycles');
});
