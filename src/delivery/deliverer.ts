import type { EventRecord } from '../event-log/event-record.js';
import type { RouteTarget } from '../routing/route-table.js';
import type { RetryPolicy } from '../routing/target-settings.js';
import type { DispatchResult, HttpDispatcher } from './http/http-dispatcher.js';
import { TokenError, type OAuth2, type OAuthTokens } from './http/oauth-tokens.js';
import { classify, type Outcome } from './outcome.js';
import { outboundHeaders } from './http/outbound-headers.js';
import { simulateAttempt } from './sandbox.js';
import { paymentsSignature, standardHeaders, signatureHeaders } from './signing/signing.js';
import type { SigningPlan, SigningPlans } from './signing/signing-plans.js';
import { formatTraceparent } from '../observability/trace-context.js';
import { endWithStatus, NO_TRACING, type Tracing } from '../observability/tracing.js';
import type { FlowPermit, TargetFlows } from './flow/target-flows.js';

/** What one attempt came to. */
export interface AttemptReport {
  /** Epoch ms the attempt started. */
  at: number;
  result: DispatchResult;
  outcome: Outcome;
  /** A sandbox event: nothing was sent. */
  simulated: boolean;
}

/**
 * Makes ONE attempt to deliver an event to a target; when to try again is the
 * lane's business (src/delivery/lane.ts). An attempt is a small pipeline:
 *
 *   flow permit ─► headers (mapped < own < static) ─► authorise ─► sign ─► send (deadline, cap) ─► classify
 *   (the target's                                        └── OAuth 2.0: a 401 refreshes the token and resends once
 *    limit, rate, pause: src/delivery/flow/target-flows.ts; taken before signing, so a wait never ages a signature)
 *
 * Sandbox events stop before the permit: a simulated answer stands in for the send.
 */
export class Deliverer {
  private readonly dispatcher: HttpDispatcher;
  private readonly tokens: OAuthTokens;
  private readonly plans: SigningPlans;
  private readonly defaultPolicy: Readonly<RetryPolicy>;
  private readonly now: () => number;
  private readonly tracing: Tracing;
  private readonly flows: TargetFlows | null;
  constructor(
    dispatcher: HttpDispatcher,
    tokens: OAuthTokens,
    plans: SigningPlans,
    defaultPolicy: Readonly<RetryPolicy>,
    now: () => number = Date.now,
    /** A span per attempt, whose id the receiver gets as its traceparent's parent. */
    tracing: Tracing = NO_TRACING,
    /** Flow control per target; null: none (requests are bounded only by the dispatcher's per-origin cap). */
    flows: TargetFlows | null = null,
  ) {
    this.dispatcher = dispatcher;
    this.tokens = tokens;
    this.plans = plans;
    this.defaultPolicy = defaultPolicy;
    this.now = now;
    this.tracing = tracing;
    this.flows = flows;
  }

  policyOf(target: RouteTarget): Readonly<RetryPolicy> {
    return target.settings.retryPolicy ?? this.defaultPolicy;
  }

  /**
   * `withdraw`: aborting it while the attempt still waits for its flow permit
   * gives the place up (the attempt rejects with PermitWithdrawn, nothing was
   * sent); once the permit is held it changes nothing.
   */
  async attempt(record: EventRecord, target: RouteTarget, attempt: number, withdraw?: AbortSignal): Promise<AttemptReport> {
    const retryable = this.policyOf(target).retryableStatuses;
    if (record.sandbox) {
      const result = simulateAttempt(record.sandbox, attempt);
      return { at: this.now(), result, outcome: classify(result, retryable), simulated: true };
    }
    const flows = this.flows;
    const permit: FlowPermit | null = flows === null ? null : (flows.tryAcquire(target) ?? (await flows.acquire(target, withdraw)));
    // The attempt starts when it may be sent: a wait for the permit is not part of it.
    const at = this.now();
    let result: DispatchResult | null = null;
    try {
      result = this.tracing.enabled ? await this.tracedSend(record, target, attempt) : await this.sendNow(record, target, null);
      return { at, result, outcome: classify(result, retryable), simulated: false };
    } finally {
      if (permit !== null) flows!.release(permit, result, target.settings.timeoutMs);
    }
  }

  /** The send inside the attempt's span, a child of the context stored with the event. */
  private async tracedSend(record: EventRecord, target: RouteTarget, attempt: number): Promise<DispatchResult> {
    // Host and port only: a receiver URL's path or query may hold a token.
    const span = this.tracing.startAttempt(record.traceparent, record.tracestate, {
      'http.request.method': 'POST',
      'server.address': target.url.hostname,
      'server.port': Number(target.url.port) || (target.url.protocol === 'https:' ? 443 : 80),
      'streamgate.event_id': record.id,
      'streamgate.target': target.publicId,
      'streamgate.attempt': attempt,
    })!;
    let result: DispatchResult;
    try {
      result = await this.sendNow(record, target, formatTraceparent(span.spanContext()));
    } catch (err) {
      span.recordException(err as Error);
      endWithStatus(span, 0, 400);
      throw err;
    }
    span.setAttribute('streamgate.outcome', classify(result, this.policyOf(target).retryableStatuses).kind);
    if (result.kind === 'error') span.setAttribute('error.type', result.code);
    endWithStatus(span, result.kind === 'response' ? result.status : 0, 400);
    return result;
  }

  /**
   * The request as the target's settings and the queue's signing plan make
   * it. Synchronous up to the dispatcher when the plan is cached and the
   * target needs no OAuth token (the common case): one async frame and
   * promise less per attempt (issue 27).
   */
  private sendNow(record: EventRecord, target: RouteTarget, traceparent: string | null): Promise<DispatchResult> | DispatchResult {
    let planned: SigningPlan | Promise<SigningPlan>;
    try {
      planned = this.plans.planFor(record);
    } catch (err) {
      return unplanned(err);
    }
    if (planned instanceof Promise) return planned.then((plan) => this.sendPlanned(record, target, traceparent, plan), unplanned);
    return this.sendPlanned(record, target, traceparent, planned);
  }

  private sendPlanned(record: EventRecord, target: RouteTarget, traceparent: string | null, plan: SigningPlan): Promise<DispatchResult> | DispatchResult {
    const auth = target.settings.auth;
    if (auth.mode === 'none') return this.signedSend(record, target, traceparent, plan, null);
    if (auth.mode === 'bearer') return this.signedSend(record, target, traceparent, plan, `Bearer ${auth.token}`);
    if (auth.mode === 'basic') return this.signedSend(record, target, traceparent, plan, `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`);
    return this.sendWithToken(record, target, traceparent, plan, auth);
  }

  /** One request: the target's headers, its authorization, the trace context, then the signature over the exact bytes sent. */
  private signedSend(record: EventRecord, target: RouteTarget, traceparent: string | null, plan: SigningPlan, authorization: string | null): Promise<DispatchResult> | DispatchResult {
    // A fresh object per request: the dispatcher adds content-length to it.
    const headers = outboundHeaders(record, target.settings);
    if (authorization !== null) headers.authorization = authorization;
    // Unless a target's static header set its own (configuration wins, docs/api.md#ingress).
    if (traceparent !== null && (headers.traceparent === undefined || headers.traceparent === record.traceparent)) headers.traceparent = traceparent;
    // Signing is the top layer: computed last, over the exact bytes sent, anew per attempt.
    if (record.paymentsRecalc && plan.paymentsSecret) {
      headers['payments-signature'] = paymentsSignature(plan.paymentsSecret, record.body, this.now());
    } else if (plan.standard) {
      if (plan.keys.length === 0) return failure('ENOKEY', 'the queue signs deliveries but its workspace has no active signing key');
      Object.assign(headers, standardHeaders(plan.keys, { eventId: record.id, body: record.body }, this.now()));
    } else if (plan.hmac) {
      // Never send unsigned what the queue promises to sign: the receiver would be right to refuse it.
      if (!plan.key) return failure('ENOKEY', 'the queue signs deliveries but its workspace has no active signing key');
      Object.assign(headers, signatureHeaders(plan.key, { url: target.url, body: record.body, eventId: record.id, idempotencyKey: record.idempotencyKey }, this.now()));
    }
    return this.dispatcher.send({ url: target.url, headers, body: record.body, timeoutMs: target.settings.timeoutMs });
  }

  /** OAuth 2.0 client credentials: a cached token; a 401 refreshes it and resends once. */
  private async sendWithToken(record: EventRecord, target: RouteTarget, traceparent: string | null, plan: SigningPlan, auth: OAuth2): Promise<DispatchResult> {
    const timeoutMs = target.settings.timeoutMs;
    let token: string;
    try {
      token = await this.tokens.token(auth, timeoutMs);
    } catch (err) {
      if (err instanceof TokenError) return failure('ETOKEN', err.message);
      throw err;
    }
    const first = await this.signedSend(record, target, traceparent, plan, `Bearer ${token}`);
    if (first.kind !== 'response' || first.status !== 401) return first;
    // The receiver no longer takes the token (revoked, rotated): refresh once and resend.
    this.tokens.invalidate(auth, token);
    try {
      token = await this.tokens.token(auth, timeoutMs);
    } catch (err) {
      if (err instanceof TokenError) return failure('ETOKEN', `after a 401: ${err.message}`, first.durationMs);
      throw err;
    }
    const second = await this.signedSend(record, target, traceparent, plan, `Bearer ${token}`);
    return { ...second, durationMs: second.durationMs + first.durationMs };
  }
}

function unplanned(err: unknown): DispatchResult {
  return failure('ECONFIG', `cannot read the queue's signing settings: ${(err as Error).message}`);
}

function failure(code: string, error: string, durationMs = 0): DispatchResult {
  return { kind: 'error', code, error, durationMs };
}
