// What /console/ loads before sign-in, gzipped: index.html, the files it links
// (scripts, stylesheets, modulepreloads) and the chunks those scripts import
// statically. Lazily imported pages (producer, partner) are not counted: they
// load only when opened. Run after `npm run build`; exits 1 over the budget.
//
//   node bench/console-size.mjs [--json]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const DIST = new URL('../dist/console/', import.meta.url).pathname;
const BUDGET = 250 * 1024;

/** The files a first visit of /console/ fetches, as paths under dist/console. */
export function firstLoadFiles(dist = DIST) {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const files = new Set(['index.html']);
  const queue = [];
  for (const m of html.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)="\/console\/([^"]+)"/g)) queue.push(m[1]);
  while (queue.length > 0) {
    const file = queue.shift();
    if (files.has(file)) continue;
    files.add(file);
    if (!file.endsWith('.js')) continue;
    const code = readFileSync(join(dist, file), 'utf8');
    // Static imports only (`import … from "./x.js"`, `import "./x.js"`), not import("./x.js").
    for (const m of code.matchAll(/(?:^|[;}\s])import\s*(?:[\w*${}\s,]+from\s*)?["']\.\/([^"']+\.js)["']/g)) {
      queue.push(file.replace(/[^/]+$/, '') + m[1]);
    }
  }
  return [...files].map((f) => {
    const bytes = readFileSync(join(dist, f));
    return { file: f, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = firstLoadFiles();
  const total = files.reduce((n, f) => n + f.gzip, 0);
  if (process.argv.includes('--json')) console.log(JSON.stringify({ files, gzipTotal: total, budget: BUDGET }));
  else {
    for (const f of files) console.log(`${f.file.padEnd(40)} ${String(f.bytes).padStart(8)} B  ${String(f.gzip).padStart(7)} B gzip`);
    console.log(`before sign-in: ${(total / 1024).toFixed(1)} KiB gzipped (budget ${BUDGET / 1024} KiB)`);
  }
  process.exit(total <= BUDGET ? 0 : 1);
}
