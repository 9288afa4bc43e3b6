/**
 * Cookies as the console uses them: reading one value from the Cookie header
 * and writing Set-Cookie lines. Values are our own base64url tokens, so no
 * quoting or escaping is needed; anything else is ignored on the way in.
 */

/** The value of cookie `name` in a Cookie header, or null. The first one wins when repeated. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(/;\s*/)) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export interface CookieOptions {
  maxAgeSeconds: number;
  path: string;
  /** Strict for the session; Lax where a cross-site top-level redirect must carry it (the OIDC callback). */
  sameSite: 'Strict' | 'Lax';
  secure: boolean;
}

/** A Set-Cookie value: always HttpOnly (no script ever reads a console cookie). */
export function setCookie(name: string, value: string, o: CookieOptions): string {
  return `${name}=${value}; HttpOnly; SameSite=${o.sameSite}; Path=${o.path}; Max-Age=${o.maxAgeSeconds}${o.secure ? '; Secure' : ''}`;
}

/** A Set-Cookie value that deletes the cookie (same name, path and flags, Max-Age=0). */
export function clearCookie(name: string, o: Omit<CookieOptions, 'maxAgeSeconds'>): string {
  return setCookie(name, '', { ...o, maxAgeSeconds: 0 });
}
