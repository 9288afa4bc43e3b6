import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';

/** Methods that change nothing: a cookie may authenticate them from anywhere (SameSite still applies). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The origin this server is reached at: `console.publicUrl` when set, else
 * `http://` and the Host header (a single machine on loopback). A browser
 * cannot forge Host for the server it sends to, so a page elsewhere cannot
 * make its own Origin match it.
 */
export function ownOrigin(exchange: Exchange, publicUrl: string): string {
  if (publicUrl) return new URL(publicUrl).origin;
  return `http://${(exchange.headers.host ?? '').toLowerCase()}`;
}

/**
 * CSRF defence for cookie-authenticated requests (docs/console.md): a method
 * that may change state must say it comes from this very origin — with
 * `Sec-Fetch-Site: same-origin` when the browser sends that header (every
 * current one does), else with an `Origin` equal to ours. `same-site` is not
 * enough: another port of the same host is the same site but another origin.
 * A request with neither header is refused too: every browser sends one of
 * them on a cross-origin write, and only non-browser clients omit both, which
 * authenticate with API keys instead. Body-less POSTs are no exception.
 */
export function crossOriginWrite(exchange: Exchange, publicUrl: string): boolean {
  if (SAFE_METHODS.has(exchange.method)) return false;
  return !fromOwnOrigin(exchange, publicUrl, false);
}

/**
 * True when the request demonstrably comes from our origin; with `lenient`,
 * also when it carries neither header (a non-browser client: the sign-in form
 * refuses only what a browser marks as cross-origin, so curl can sign in).
 */
export function fromOwnOrigin(exchange: Exchange, publicUrl: string, lenient: boolean): boolean {
  const site = exchange.headers['sec-fetch-site'];
  if (site !== undefined) return site.trim().toLowerCase() === 'same-origin';
  const origin = exchange.headers.origin;
  if (origin !== undefined) return origin.trim().toLowerCase() === ownOrigin(exchange, publicUrl);
  return lenient;
}

/** The 403 a refused cross-origin request gets. */
export function crossOriginRefused(): ServiceError {
  return new ServiceError('forbidden', "A console session may only change things from the console's own origin (Sec-Fetch-Site or Origin say this request comes from elsewhere).");
}
