/**
 * The one way the console talks to streamgate: same-origin fetch with the
 * session cookie (HttpOnly, so scripts never see it). No credential is ever
 * put in a header, the URL or storage by this code.
 */

export interface FieldProblem {
  field: string;
  problem: string;
}

/** An error the API answered, with the envelope's code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message);
  }

  /** The problem the API named for `field` (or a field under it), if any. */
  forField(field: string): string | undefined {
    const hit = this.details.find((d) => d.field === field || d.field.startsWith(`${field}.`) || d.field.startsWith(`${field}[`));
    return hit ? `${hit.field === field ? '' : `${hit.field}: `}${hit.problem}` : undefined;
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when an API call answers 401: the session expired or was signed out elsewhere. */
export function onUnauthorized(fn: Listener): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export async function api<T = unknown>(method: string, path: string, body?: unknown, opts: { quiet401?: boolean; headers?: Record<string, string> } = {}): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { accept: 'application/json', ...opts.headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { accept: 'application/json', 'content-type': 'application/json', ...opts.headers };
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network', 'streamgate did not answer (network error). Try again.');
  }
  const text = await res.text();
  let json: unknown = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!res.ok) {
    const env = (json as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
    const details = Array.isArray(env?.details) ? (env!.details as FieldProblem[]).filter((d) => d && typeof d.field === 'string') : [];
    const err = new ApiError(res.status, env?.code ?? `http_${res.status}`, env?.message ?? `The request failed (HTTP ${res.status}).`, details);
    if (res.status === 401 && !opts.quiet401) for (const fn of unauthorizedListeners) fn();
    throw err;
  }
  return json as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body ?? {});
export const put = <T>(path: string, body?: unknown) => api<T>('PUT', path, body ?? {});
export const del = <T>(path: string, body?: unknown) => api<T>('DELETE', path, body);

/** Percent-encodes one path segment (queue and target names may hold '.'). */
export const seg = (s: string) => encodeURIComponent(s);

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message}${err.code && !err.code.startsWith('http_') && err.code !== 'network' ? ` (${err.code})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}
