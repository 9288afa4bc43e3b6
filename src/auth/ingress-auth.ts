import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import type { QueueView } from '../ingress/queue-directory.js';
import type { Validator } from './validation-pool.js';
import { parseApiKey, type KeyProfile } from './api-key.js';
import type { CheckVerdict } from './crypto-checks.js';
import type { KeyAuthenticator } from './key-authenticator.js';
import type { NonceStore } from './nonce-store.js';
import { parsePaymentsSignature } from './payments-signature.js';
import { canonicalHead, checkTimestamp, readSignedHeaders } from './signed-request.js';
import { parseGithubSignature, parseShopifyHmac, parseStandardWebhooks, standardWebhooksPrefix } from './source-signatures.js';
import type { SigningKeyCache } from './signing-key-cache.js';

export interface IngressAuthOptions {
  skewSeconds: number;
  paymentsToleranceSeconds: number;
  /** Unix seconds now (tests move the clock). */
  now?: () => number;
}

/** What authentication established beyond "allowed". */
export interface Authenticated {
  /** The event's Payments-Signature was verified (payments queues). */
  paymentsVerified: boolean;
}

// Every profile may post events today (docs/api.md#authentication); a profile without the
// ingress permission would be refused with missing_permission.
const MAY_INGEST: Record<KeyProfile, boolean> = { ingress: true, full: true, build: true };

const NOT_PAYMENTS: Authenticated = Object.freeze({ paymentsVerified: false });
const PAYMENTS: Authenticated = Object.freeze({ paymentsVerified: true });

/**
 * Checks the credential a queue's auth mode asks for (docs/api.md#authentication):
 *
 *   api_key         X-Api-Key qak_<keyId>.<secret>: 401 missing/invalid_api_key;
 *                   403 missing_permission (a key of another workspace of the
 *                   same license, or a profile without ingress), 403
 *                   client_scope_denied (the key's queue scopes leave this queue out)
 *   signed_request  HMAC over the canonical string (docs/api.md#authentication): 401
 *                   invalid_signature, timestamp_out_of_range, replayed_request
 *   payments        Payments-Signature under the queue's payments secret
 *   standard_webhooks, github, shopify
 *                   the provider's signature over the raw body under the
 *                   queue's sourceSecret (source-signatures.ts): 401
 *                   invalid_signature; timestamp_out_of_range (standard_webhooks)
 *
 * Payments and inbound-source queues take no API key: the sender is a
 * provider that cannot send one; its signature is the credential.
 * A key of another license is refused exactly like a wrong key, so the answer
 * says nothing about which keys exist. Hashing and HMACs run through the
 * Validator (inline or in the worker pool); nonces are consumed only after the
 * signature verified, so nobody can burn a sender's nonces.
 */
export class IngressAuth {
  private readonly now: () => number;

  private readonly keys: KeyAuthenticator;
  private readonly signingKeys: SigningKeyCache;
  private readonly nonces: NonceStore;
  private readonly validator: Validator;
  private readonly options: IngressAuthOptions;
  constructor(
    keys: KeyAuthenticator,
    signingKeys: SigningKeyCache,
    nonces: NonceStore,
    validator: Validator,
    options: IngressAuthOptions,
  ) {
    this.keys = keys;
    this.signingKeys = signingKeys;
    this.nonces = nonces;
    this.validator = validator;
    this.options = options;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
  }

  /** queue_paused when the queue's mode has nothing to verify with (docs/api.md#errors). */
  async checkUsable(queue: QueueView): Promise<void> {
    switch (queue.settings.authMode) {
      case 'api_key':
        return;
      case 'signed_request': {
        const keys = await this.signingKeys.activeKeys(queue.workspaceId);
        if (keys.size === 0) throw new ServiceError('queue_paused', 'This queue takes signed requests and its workspace has no active signing key.');
        return;
      }
      case 'payments':
        if (!queue.settings.paymentsSecret) throw new ServiceError('queue_paused', 'This payments queue has no payments secret configured.');
        return;
      case 'standard_webhooks':
      case 'github':
      case 'shopify':
        if (!queue.sourceKey) throw new ServiceError('queue_paused', `This ${queue.settings.authMode} queue has no source secret configured.`);
        return;
    }
  }

  authenticate(exchange: Exchange, queue: QueueView): Promise<Authenticated> {
    switch (queue.settings.authMode) {
      case 'api_key':
        return this.apiKey(exchange, queue);
      case 'signed_request':
        return this.signedRequest(exchange, queue);
      case 'payments':
        return this.payments(exchange, queue);
      case 'standard_webhooks':
        return this.standardWebhooks(exchange, queue);
      case 'github':
        return this.github(exchange, queue);
      case 'shopify':
        return this.shopify(exchange, queue);
    }
  }

  private async apiKey(exchange: Exchange, queue: QueueView): Promise<Authenticated> {
    const presented = exchange.headers['x-api-key'];
    if (presented === undefined || presented === '') throw new ServiceError('missing_api_key');
    const parsed = parseApiKey(presented);
    if (!parsed) throw new ServiceError('invalid_api_key');
    const found = this.keys.lookup(parsed.keyId);
    const stored = found instanceof Promise ? await found : found;
    if (!stored || stored.revoked) throw new ServiceError('invalid_api_key');
    const checked = this.validator.check({ k: 'key', secret: parsed.secret, hash: stored.secretHash });
    if ((typeof checked === 'string' ? checked : await settle(checked)) !== 'ok') throw new ServiceError('invalid_api_key');
    if (stored.licenseId !== queue.licenseId) throw new ServiceError('invalid_api_key');
    if (stored.workspaceId !== null && stored.workspaceId !== queue.workspaceId) {
      throw new ServiceError('missing_permission', 'This key belongs to another workspace of the license.');
    }
    if (!MAY_INGEST[stored.profile]) throw new ServiceError('missing_permission', `A key of profile ${stored.profile} cannot post events.`);
    if (stored.queueScopes !== null && !stored.queueScopes.includes(queue.queueName)) {
      throw new ServiceError('client_scope_denied', "This queue is not among the key's queue scopes.");
    }
    this.keys.usage?.used(stored.keyId);
    return NOT_PAYMENTS;
  }

  private async signedRequest(exchange: Exchange, queue: QueueView): Promise<Authenticated> {
    const h = readSignedHeaders(exchange.headers);
    checkTimestamp(h.timestamp, this.now(), this.options.skewSeconds, 'X-Service-Timestamp');
    const found = this.signingKeys.activeKeys(queue.workspaceId);
    const keys = found instanceof Promise ? await found : found;
    const secret = keys.get(h.keyId);
    if (secret === undefined) throw new ServiceError('invalid_signature', 'X-Service-Key-Id names no active signing key of this workspace.');
    const body = await exchange.body;
    const verdict = await settle(this.validator.check({
      k: 'signed',
      secret,
      head: canonicalHead(exchange.method, exchange.path, exchange.query, h),
      body,
      contentSha: h.contentSha,
      signature: h.signature,
    }));
    if (verdict === 'content_mismatch') throw new ServiceError('invalid_signature', 'X-Service-Content-SHA256 is not the SHA-256 of the body.');
    if (verdict !== 'ok') throw new ServiceError('invalid_signature');
    if (!(await this.nonces.consume(h.keyId, h.nonce))) throw new ServiceError('replayed_request');
    return NOT_PAYMENTS;
  }

  private async payments(exchange: Exchange, queue: QueueView): Promise<Authenticated> {
    const sig = parsePaymentsSignature(exchange.headers['payments-signature']);
    checkTimestamp(sig.timestamp, this.now(), this.options.paymentsToleranceSeconds, 'The Payments-Signature timestamp');
    const body = await exchange.body;
    const verdict = await settle(this.validator.check({ k: 'payments', secret: queue.settings.paymentsSecret!, timestamp: sig.timestamp, body, signatures: sig.signatures }));
    if (verdict !== 'ok') throw new ServiceError('invalid_signature', 'No v1 signature of Payments-Signature matches the body under this queue\'s secret.');
    return PAYMENTS;
  }

  private async github(exchange: Exchange, queue: QueueView): Promise<Authenticated> {
    const mac = parseGithubSignature(exchange.headers['x-hub-signature-256']);
    return this.source(exchange, queue, '', [mac], 'X-Hub-Signature-256');
  }

  private async shopify(exchange: Exchange, queue: QueueView): Promise<Authenticated> {
    const mac = parseShopifyHmac(exchange.headers['x-shopify-hmac-sha256']);
    return this.source(exchange, queue, '', [mac], 'X-Shopify-Hmac-Sha256');
  }

  private async standardWebhooks(exchange: Exchange, queue: QueueView): Promise<Authenticated> {
    const h = parseStandardWebhooks(exchange.headers);
    // The signed-request skew: Standard Webhooks receivers refuse old and future timestamps alike.
    checkTimestamp(h.timestamp, this.now(), this.options.skewSeconds, 'webhook-timestamp');
    return this.source(exchange, queue, standardWebhooksPrefix(h.id, h.timestamp), h.candidates, 'webhook-signature');
  }

  /** HMAC-SHA256(sourceKey, prefix ‖ raw body) against the presented MACs. */
  private async source(exchange: Exchange, queue: QueueView, prefix: string, candidates: readonly Uint8Array[], header: string): Promise<Authenticated> {
    const body = await exchange.body;
    // checkUsable ran first: the key is there.
    const verdict = await settle(this.validator.check({ k: 'source', key: queue.sourceKey!, prefix, body, candidates }));
    if (verdict !== 'ok') throw new ServiceError('invalid_signature', `${header} does not match the body under this queue's source secret.`);
    return NOT_PAYMENTS;
  }
}

/** A verdict from the pool; a failed pool (a thread died) refuses retryably, never 500. */
async function settle(pending: CheckVerdict | Promise<CheckVerdict>): Promise<CheckVerdict> {
  try {
    return await pending;
  } catch {
    throw new ServiceError('unavailable', 'Credential validation is unavailable right now; retry.');
  }
}
