import Type, { type Static } from 'typebox';
import { ServiceError } from '../../errors.js';
import type { SsrfGuard } from '../../delivery/http/ssrf-guard.js';
import { forwardedHeaderProblem, HEADER_VALUE as HEADER_VALUE_RE, routeCollisions, staticHeaderProblem } from '../../routing/header-rules.js';
import type { QueueSettings } from '../../routing/queue-settings.js';
import type { RetryPolicy, TargetAuth, TargetSettings } from '../../routing/target-settings.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed, int, maybe, withProblem } from '../../schema/schema-kit.js';
import { checkBodyWithRules, type Problems } from '../json-body.js';

/** Bounds of a target's retry policy: generous, but a typo cannot schedule for years. */
const MAX_DELAY_SECONDS = 7 * 86_400;
const MAX_HORIZON_SECONDS = 30 * 86_400;
const MAX_SCHEDULE_STEPS = 50;
/** Bounds of a target's flow-control ceilings (docs/flow-control.md); migration 060 checks the same. */
export const MAX_CONCURRENCY = 10_000;
export const MIN_RATE_PER_SECOND = 0.01;
export const MAX_RATE_PER_SECOND = 100_000;

const HEADER_VALUE = HEADER_VALUE_RE.source;
const HEADER_VALUE_WORDS = 'visible Latin-1 characters (no CR, LF or NUL)';

/** `{ scheduleSeconds, horizonSeconds, retryableStatuses? }` (docs/delivery.md#delivery-engine). */
export const RetryPolicyInput = closed(
  {
    scheduleSeconds: withProblem(
      Type.Array(int(0, MAX_DELAY_SECONDS), { minItems: 1, maxItems: MAX_SCHEDULE_STEPS }),
      `must be a list of 1 to ${MAX_SCHEDULE_STEPS} integers from 0 to ${MAX_DELAY_SECONDS}`,
    ),
    horizonSeconds: int(0, MAX_HORIZON_SECONDS),
    retryableStatuses: Type.Optional(
      withProblem(
        Type.Array(Type.Integer({ minimum: 400, maximum: 499, not: { const: 410 } })),
        'must be a list of 4xx statuses other than 410 (408, 429 and 5xx are always retried; 410 disables the target)',
      ),
    ),
  },
  { description: 'The delays before each retry (the last one repeats), how long after the first attempt retries may go on, and the other 4xx statuses to retry.' },
);

const nonEmpty = () => Type.String({ minLength: 1 });
const mode = <M extends string>(value: M) => Type.Literal(value);

/** How delivery authenticates to the receiver, told apart by `mode`. */
export const TargetAuthInput = Type.Unsafe<
  | { mode: 'none' }
  | { mode: 'bearer'; token: string }
  | { mode: 'basic'; username: string; password: string }
  | { mode: 'oauth2'; tokenUrl: string; clientId: string; clientSecret: string; scope?: string }
>({
  type: 'object',
  discriminator: { propertyName: 'mode' },
  oneOf: [
    closed({ mode: mode('none') }),
    closed({ mode: mode('bearer'), token: withProblem(Type.String({ minLength: 1, pattern: HEADER_VALUE }), `must be ${HEADER_VALUE_WORDS}, not empty`) }),
    closed({
      mode: mode('basic'),
      username: withProblem(Type.String({ minLength: 1, pattern: '^[^:]*$' }), 'must not be empty and cannot contain ":"'),
      password: Type.String(),
    }),
    closed({ mode: mode('oauth2'), tokenUrl: nonEmpty(), clientId: nonEmpty(), clientSecret: nonEmpty(), scope: Type.Optional(Type.String()) }),
  ],
});

/** The body of `PUT /v1/tenants/{tenant}/targets/{name}` (docs/api.md#configuration-api). */
export const TargetInput = closed(
  {
  url: Type.String({ maxLength: 2048 }),
  auth: Type.Optional(TargetAuthInput),
  staticHeaders: Type.Optional(Type.Record(Type.String(), withProblem(Type.String({ pattern: HEADER_VALUE }), `must be a string of ${HEADER_VALUE_WORDS}`))),
  timeoutMs: maybe(int(100, 600_000)),
  retryPolicy: Type.Optional(RetryPolicyInput),
  groupKeyHeader: maybe(Type.String({ maxLength: 100 })),
  maxConcurrency: maybe(int(1, MAX_CONCURRENCY)),
  maxRatePerSecond: maybe(Type.Number({ minimum: MIN_RATE_PER_SECOND, maximum: MAX_RATE_PER_SECOND })),
  },
  { title: 'TargetInput', description: 'A receiver URL and how deliveries reach it; only url is required (null: not given).' },
);
export const checkTargetInput = compileBody(TargetInput);

/**
 * Reads and validates the body of `PUT /v1/tenants/{tenant}/targets/{name}`:
 * the schema, then the header rules of docs/api.md#ingress that a target
 * alone can break (see src/routing/header-rules.ts).
 */
export function readTarget(body: unknown): { url: string; settings: Partial<TargetSettings> } {
  return checkBodyWithRules(body, checkTargetInput, targetOf);
}

function targetOf(input: Static<typeof TargetInput>, problems: Problems): { url: string; settings: Partial<TargetSettings> } {
  const settings: Partial<TargetSettings> = {};
  if (input.timeoutMs != null) settings.timeoutMs = input.timeoutMs;
  if (input.maxConcurrency != null) settings.maxConcurrency = input.maxConcurrency;
  if (input.maxRatePerSecond != null) settings.maxRatePerSecond = input.maxRatePerSecond;
  if (input.auth !== undefined) settings.auth = input.auth as TargetAuth;
  const authSetsAuthorization = settings.auth !== undefined && settings.auth.mode !== 'none';
  if (input.staticHeaders !== undefined) {
    const out: Record<string, string> = {};
    const seen = new Set<string>();
    for (const [name, value] of Object.entries(input.staticHeaders)) {
      const problem = staticHeaderProblem(name, authSetsAuthorization);
      if (problem) problems.add(`staticHeaders.${name}`, problem);
      else if (seen.has(name.toLowerCase())) problems.add(`staticHeaders.${name}`, 'is given twice (header names are case-insensitive)');
      else out[name] = value;
      seen.add(name.toLowerCase());
    }
    settings.staticHeaders = out;
  }
  if (input.groupKeyHeader != null) {
    const groupKeyHeader = input.groupKeyHeader;
    // A target may be routed from any queue, payments ones included: rule 3 always applies.
    const problem = forwardedHeaderProblem(groupKeyHeader, true);
    const lower = groupKeyHeader.toLowerCase();
    if (problem) problems.add('groupKeyHeader', problem);
    else if (Object.keys(settings.staticHeaders ?? {}).some((n) => n.toLowerCase() === lower)) {
      problems.add('groupKeyHeader', 'collides with a static header of the target');
    } else settings.groupKeyHeader = groupKeyHeader;
  }
  if (input.retryPolicy !== undefined) settings.retryPolicy = retryPolicyOf(input.retryPolicy);
  return { url: input.url, settings };
}

/** A schema-valid retry policy as delivery reads it: statuses deduplicated and sorted. */
export function retryPolicyOf(input: Static<typeof RetryPolicyInput>): RetryPolicy {
  const statuses = input.retryableStatuses ?? [];
  return { scheduleSeconds: input.scheduleSeconds, horizonSeconds: input.horizonSeconds, retryableStatuses: [...new Set(statuses)].sort((a, b) => a - b) };
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
