/**
 * Lets Node run the TypeScript sources and tests as they are, with its own
 * type stripping (tap's TAP_TYPE_STRIP_ONLY mode, set by test/run.sh): the code
 * imports `./x.js` (what tsc emits into dist/), and this resolves such a
 * specifier to the `./x.ts` beside it when no `.js` file is there. Loaded with
 * `--import` (package.json "tap"."node-arg"), so worker threads and children
 * started with process.execArgv inherit it.
 *
 * Why not ts-node (tap's default): it transpiles each of the ~300 modules a
 * test file loads, about 5 s per test process, most of a short file's time.
 * Stripping needs the sources to be erasable TypeScript (tsconfig.json
 * "erasableSyntaxOnly": no enums, namespaces or parameter properties).
 */
import { registerHooks } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

registerHooks({
  resolve(specifier, context, nextResolve) {
    const relative = specifier.startsWith('./') || specifier.startsWith('../');
    if ((relative && context.parentURL?.startsWith('file:')) || specifier.startsWith('file:')) {
      // t.mockImport imports a file: URL with a query (?tapmock=…) that the
      // file name must not include.
      const url = new URL(specifier, context.parentURL);
      if (url.pathname.endsWith('.js') && !existsSync(fileURLToPath(url))) {
        const source = new URL(url.href);
        source.pathname = `${url.pathname.slice(0, -'.js'.length)}.ts`;
        if (existsSync(fileURLToPath(source))) return nextResolve(source.href, context);
      }
    }
    return nextResolve(specifier, context);
  },
});
