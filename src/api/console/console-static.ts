import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import type { Router } from '../../http/router.js';

// dist/console of this package, whether this file runs from src/ (tests) or dist/.
const DEFAULT_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

/**
 * Sent with every console answer (issue 14 contract): the built app has no
 * inline script or style and loads nothing from elsewhere, so the policy can
 * be this strict; frame-ancestors 'none' keeps it out of other sites' frames.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/** Content-hashed file names never change content: cache them for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Serves the built console (`console.dir`, default dist/console) at /console/:
 * files under assets/ with a year-long cache, any other existing file with
 * `no-cache`, and index.html for every other path (the app's own routes;
 * history routing needs this fallback). A path is served only when every
 * decoded segment is a plain name, and its real path (symlinks resolved) lies
 * inside the folder: `..`, encoded or not, never leaves it. Without a build,
 * an HTML page says how to make one (503), never a crash.
 */
export function registerConsoleStatic(router: Router, dir: string): void {
  const root = resolve(dir || DEFAULT_DIR);
  router.add('get', '/console', { maxBodyBytes: 0 }, (ex) => ex.send(308, '', { location: '/console/', ...CONSOLE_HEADERS }));
  router.add('get', '/console/*', { maxBodyBytes: 0 }, (ex) => serve(ex, root));
}

async function serve(ex: Exchange, root: string): Promise<void> {
  const segments = pathSegments(ex.path);
  if (segments === null) return notFound(ex);
  // The console's API and auth paths are JSON endpoints: one that does not exist is an API 404, not the app.
  if (segments[0] === 'api' || segments[0] === 'auth') throw new ServiceError('not_found', `No route for ${ex.method} ${ex.path}.`);
  if (segments.length > 0) {
    const file = await fileInside(root, segments);
    if (file !== null) {
      const cache = segments[0] === 'assets' ? IMMUTABLE : 'no-cache';
      return ex.send(200, await readFile(file), { 'content-type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream', 'cache-control': cache, ...CONSOLE_HEADERS });
    }
    // A missing asset is a 404, not the app: a script tag must not get HTML.
    if (segments[0] === 'assets') return notFound(ex);
  }
  const index = await fileInside(root, ['index.html']);
  if (index === null) {
    return ex.send(503, page('The console is not built', `There is no console build in ${escapeHtml(root)}. Run <code>npm run build</code> (it writes dist/console), or point <code>console.dir</code> at a build, then reload.`), {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      ...CONSOLE_HEADERS,
    });
  }
  ex.send(200, await readFile(index), { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...CONSOLE_HEADERS });
}

/**
 * The decoded path segments after /console/ (empty ones dropped), or null when
 * one cannot be a file name of ours: a bad escape, `.` or `..`, a separator
 * or a control character inside a segment, a dot file.
 */
export function pathSegments(path: string): string[] | null {
  const rest = path.startsWith('/console/') ? path.slice('/console/'.length) : '';
  const out: string[] = [];
  for (const raw of rest.split('/')) {
    if (raw === '') continue;
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (seg.startsWith('.') || /[\\/\u0000-\u001f\u007f]/.test(seg)) return null;
    out.push(seg);
  }
  return out;
}

/** The real path of a regular file at root/segments, when it exists and lies inside root. */
async function fileInside(root: string, segments: string[]): Promise<string | null> {
  try {
    const realRoot = await realpath(root);
    const real = await realpath(resolve(realRoot, ...segments));
    if (!real.startsWith(realRoot + sep)) return null;
    return (await stat(real)).isFile() ? real : null;
  } catch {
    return null;
  }
}

function notFound(ex: Exchange): void {
  ex.send(404, page('Not found', 'There is no such file in the console.'), { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...CONSOLE_HEADERS });
}

function page(title: string, html: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} · streamgate</title></head><body><h1>${title}</h1><p>${html}</p></body></html>\n`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
