import { ServiceError } from '../../errors.js';
import type { SsrfGuard } from '../../delivery/http/ssrf-guard.js';
import { forwardedHeaderProblem, isHeaderValue, routeCollisions, staticHeaderProblem } from '../../routing/header-rules.js';
import type { QueueSettings } from '../../routing/queue-settings.js';
import type { RetryPolicy, TargetAuth, TargetSettings } from '../../routing/target-settings.js';
import { FieldReader } from '../json-body.js';

/** Bounds of a target's retry policy: generous, but a typo cannot schedule for years. */
const MAX_DELAY_SECONDS = 7 * 86_400;
const MAX_HORIZON_SECONDS = 30 * 86_400;
const MAX_SCHEDULE_STEPS = 50;
/** Bounds of a target's flow-control ceilings (docs/flow-control.md); migration 060 checks the same. */
export const MAX_CONCURRENCY = 10_000;
export const MIN_RATE_PER_SECOND = 0.01;
export const MAX_RATE_PER_SECOND = 100_000;

/**
 * Reads and validates the body of `PUT /v1/tenants/{tenant}/targets/{name}`
 * (docs/api.md#configuration-api), including the header rules of docs/api.md#ingress that a target
 * alone can break (see src/routing/header-rules.ts).
 */
export function readTarget(body: Record<string, unknown>): { url: string; settings: Partial<TargetSettings> } {
  const r = new FieldReader(body, ['url', 'auth', 'staticHeaders', 'timeoutMs', 'retryPolicy', 'groupKeyHeader', 'maxConcurrency', 'maxRatePerSecond']);
  const url = r.string('url', { required: true, max: 2048 }) ?? '';
  const settings: Partial<TargetSettings> = {};
  const timeoutMs = r.integer('timeoutMs', 100, 600_000);
  if (timeoutMs !== undefined) settings.timeoutMs = timeoutMs;
  const maxConcurrency = r.integer('maxConcurrency', 1, MAX_CONCURRENCY);
  if (maxConcurrency !== undefined) settings.maxConcurrency = maxConcurrency;
  const rate = r.raw('maxRatePerSecond');
  if (rate !== undefined && rate !== null) {
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < MIN_RATE_PER_SECOND || rate > MAX_RATE_PER_SECOND) {
      r.problem('maxRatePerSecond', `must be a number from ${MIN_RATE_PER_SECOND} to ${MAX_RATE_PER_SECOND}`);
    } else settings.maxRatePerSecond = rate;
  }
  if (r.has('auth')) {
    const auth = readAuth(r.raw('auth'));
    if (typeof auth === 'string') r.problem('auth', auth);
    else settings.auth = auth;
  }
  const authSetsAuthorization = settings.auth !== undefined && settings.auth.mode !== 'none';
  if (r.has('staticHeaders')) {
    const headers = r.raw('staticHeaders');
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) r.problem('staticHeaders', 'must be an object of name to value');
    else {
      const out: Record<string, string> = {};
      const seen = new Set<string>();
      for (const [name, value] of Object.entries(headers)) {
        const problem = staticHeaderProblem(name, authSetsAuthorization);
        if (problem) r.problem(`staticHeaders.${name}`, problem);
        else if (seen.has(name.toLowerCase())) r.problem(`staticHeaders.${name}`, 'is given twice (header names are case-insensitive)');
        else if (typeof value !== 'string' || !isHeaderValue(value)) r.problem(`staticHeaders.${name}`, 'must be a string of visible Latin-1 characters (no CR, LF or NUL)');
        else out[name] = value;
        seen.add(name.toLowerCase());
      }
      settings.staticHeaders = out;
    }
  }
  const groupKeyHeader = r.string('groupKeyHeader', { max: 100 });
  if (groupKeyHeader !== undefined) {
    // A target may be routed from any queue, payments ones included: rule 3 always applies.
    const problem = forwardedHeaderProblem(groupKeyHeader, true);
    const lower = groupKeyHeader.toLowerCase();
    if (problem) r.problem('groupKeyHeader', problem);
    else if (Object.keys(settings.staticHeaders ?? {}).some((n) => n.toLowerCase() === lower)) {
      r.problem('groupKeyHeader', 'collides with a static header of the target');
    } else settings.groupKeyHeader = groupKeyHeader;
  }
  if (r.has('retryPolicy')) {
    const policy = readRetryPolicy(r.raw('retryPolicy'));
    if (typeof policy === 'string') r.problem('retryPolicy', policy);
    else settings.retryPolicy = policy;
  }
  r.done();
  return { url, settings };
}

/**
 * `{ scheduleSeconds, horizonSeconds, retryableStatuses? }`: the delays before
 * each retry (the last one repeats), how long after the first attempt retries
 * may go on, and the other 4xx statuses to retry (docs/delivery.md#delivery-engine).
 */
export function readRetryPolicy(v: unknown): RetryPolicy | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'must be an object { scheduleSeconds, horizonSeconds, retryableStatuses? }';
  const p = v as Record<string, unknown>;
  const unknown = Object.keys(p).filter((k) => !['scheduleSeconds', 'horizonSeconds', 'retryableStatuses'].includes(k));
  if (unknown.length > 0) return `has unknown field(s) ${unknown.join(', ')}`;
  const isInt = (x: unknown, min: number, max: number): x is number => typeof x === 'number' && Number.isInteger(x) && x >= min && x <= max;
  const schedule = p.scheduleSeconds;
  if (!Array.isArray(schedule) || schedule.length < 1 || schedule.length > MAX_SCHEDULE_STEPS || !schedule.every((s) => isInt(s, 0, MAX_DELAY_SECONDS))) {
    return `scheduleSeconds must be a list of 1 to ${MAX_SCHEDULE_STEPS} integers from 0 to ${MAX_DELAY_SECONDS}`;
  }
  if (!isInt(p.horizonSeconds, 0, MAX_HORIZON_SECONDS)) return `horizonSeconds must be an integer from 0 to ${MAX_HORIZON_SECONDS}`;
  const statuses = p.retryableStatuses ?? [];
  if (!Array.isArray(statuses) || !statuses.every((s) => isInt(s, 400, 499) && s !== 410)) {
    return 'retryableStatuses must be a list of 4xx statuses other than 410 (408, 429 and 5xx are always retried; 410 disables the target)';
  }
  return { scheduleSeconds: schedule as number[], horizonSeconds: p.horizonSeconds, retryableStatuses: [...new Set(statuses as number[])].sort((a, b) => a - b) };
}

export function readAuth(v: unknown): TargetAuth | string {
  if (typeof v !== 'object' || v === null) return 'must be an object with a mode';
  const a = v as Record<string, unknown>;
  const str = (k: string) => typeof a[k] === 'string' && (a[k] as string).length > 0;
  switch (a.mode) {
    case 'none':
      return { mode: 'none' };
    case 'bearer':
      if (!str('token')) return 'bearer needs token';
      return isHeaderValue(a.token as string) ? { mode: 'bearer', token: a.token as string } : 'token must be visible Latin-1 characters (no CR, LF or NUL)';
    case 'basic':
      if (!(str('username') && typeof a.password === 'string')) return 'basic needs username and password';
      if (String(a.username).includes(':')) return 'a basic username cannot contain ":"';
      return { mode: 'basic', username: a.username as string, password: a.password as string };
    case 'oauth2': {
      if (!(str('tokenUrl') && str('clientId') && str('clientSecret'))) return 'oauth2 needs tokenUrl, clientId and clientSecret';
      if (a.scope !== undefined && typeof a.scope !== 'string') return 'oauth2 scope must be a string';
      return {
        mode: 'oauth2',
        tokenUrl: a.tokenUrl as string,
        clientId: a.clientId as string,
        clientSecret: a.clientSecret as string,
        ...(str('scope') ? { scope: a.scope as string } : {}),
      };
    }
    default:
      return 'mode must be none, bearer, basic or oauth2';
  }
}

/**
 * The SSRF check at save (docs/delivery.md#delivery-engine) of every URL a target makes delivery
 * call: its own and, for OAuth 2.0, the token URL.
 */
export async function checkTargetUrls(guard: SsrfGuard, url: string, settings: Partial<TargetSettings>): Promise<void> {
  await guard.checkUrl(url);
  if (settings.auth?.mode === 'oauth2') {
    try {
      await guard.checkUrl(settings.auth.tokenUrl);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'validation_failed') {
        throw new ServiceError('validation_failed', `auth.tokenUrl: ${err.message}`, [{ field: 'auth.tokenUrl', problem: err.message }]);
      }
      throw err;
    }
  }
}

/**
 * docs/api.md#ingress across a route: a target's static or group-key header
 * may not share a name with a mapped header of a queue routed to it. Checked
 * when a target is saved (against the queues already routed to it) and when a
 * route is created.
 */
export function checkRouteHeaders(queues: ReadonlyArray<Partial<QueueSettings>>, target: Partial<TargetSettings>): void {
  const mapped = queues.flatMap((q) => (q.mappedHeaders ?? []).map((m) => m.as));
  const problems = routeCollisions(mapped, { staticHeaders: target.staticHeaders ?? {}, groupKeyHeader: target.groupKeyHeader });
  if (problems.length > 0) {
    throw new ServiceError('validation_failed', `The headers collide: ${problems.join('; ')}.`, problems.map((problem) => ({ field: 'headers', problem })));
  }
}
