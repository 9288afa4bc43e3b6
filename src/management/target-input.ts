import type { TargetAuth, TargetSettings } from '../routing/target-settings.js';
import { FieldReader } from './json-body.js';

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
// Names a target may never set as static headers (reference §6 rule 2).
const NOT_STATIC = new Set(['x-service-event-id', 'idempotency-key']);

/** Reads and validates the body of `PUT /v1/tenants/{tenant}/targets/{name}` (contract §4). */
export function readTarget(body: Record<string, unknown>): { url: string; settings: Partial<TargetSettings> } {
  const r = new FieldReader(body, ['url', 'auth', 'staticHeaders', 'timeoutMs', 'retryPolicy', 'groupKeyHeader']);
  const url = r.string('url', { required: true, max: 2048 }) ?? '';
  const settings: Partial<TargetSettings> = {};
  const timeoutMs = r.integer('timeoutMs', 100, 600_000);
  if (timeoutMs !== undefined) settings.timeoutMs = timeoutMs;
  if (r.has('auth')) {
    const auth = readAuth(r.raw('auth'));
    if (typeof auth === 'string') r.problem('auth', auth);
    else settings.auth = auth;
  }
  if (r.has('staticHeaders')) {
    const headers = r.raw('staticHeaders');
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) r.problem('staticHeaders', 'must be an object of name to value');
    else {
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) {
        if (!HEADER_NAME.test(name)) r.problem(`staticHeaders.${name}`, 'is not a valid header name');
        else if (NOT_STATIC.has(name.toLowerCase())) r.problem(`staticHeaders.${name}`, 'cannot be a static header (reference §6 rule 2)');
        else if (typeof value !== 'string' || /[\r\n\0]/.test(value)) r.problem(`staticHeaders.${name}`, 'must be a string without CR, LF or NUL');
        else out[name] = value;
      }
      settings.staticHeaders = out;
    }
  }
  const groupKeyHeader = r.string('groupKeyHeader', { pattern: HEADER_NAME });
  if (groupKeyHeader) settings.groupKeyHeader = groupKeyHeader;
  if (r.has('retryPolicy')) r.problem('retryPolicy', 'is not configurable yet');
  r.done();
  return { url, settings };
}

export function readAuth(v: unknown): TargetAuth | string {
  if (typeof v !== 'object' || v === null) return 'must be an object with a mode';
  const a = v as Record<string, unknown>;
  const str = (k: string) => typeof a[k] === 'string' && (a[k] as string).length > 0;
  switch (a.mode) {
    case 'none':
      return { mode: 'none' };
    case 'bearer':
      return str('token') ? { mode: 'bearer', token: a.token as string } : 'bearer needs token';
    case 'basic':
      return str('username') && typeof a.password === 'string'
        ? { mode: 'basic', username: a.username as string, password: a.password as string }
        : 'basic needs username and password';
    case 'oauth2':
      return str('tokenUrl') && str('clientId') && str('clientSecret')
        ? { mode: 'oauth2', tokenUrl: a.tokenUrl as string, clientId: a.clientId as string, clientSecret: a.clientSecret as string, ...(str('scope') ? { scope: a.scope as string } : {}) }
        : 'oauth2 needs tokenUrl, clientId and clientSecret';
    default:
      return 'mode must be none, bearer, basic or oauth2';
  }
}
