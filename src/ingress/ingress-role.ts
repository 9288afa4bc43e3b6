import { IngressAuth } from '../auth/ingress-auth.js';
import { NonceStore } from '../auth/nonce-store.js';
import { SigningKeyCache } from '../auth/signing-key-cache.js';
import type { NodeContext, RoleHandle } from '../node/node-context.js';
import { IngressRepo } from '../storage/ingress-repo.js';
import { SigningKeyRepo } from '../storage/signing-key-repo.js';
import { createValidator } from '../auth/validation-pool.js';
import type { Exchange } from '../http/exchange.js';
import { IdempotencyGate } from './idempotency.js';
import { postEventHandler } from './post-event.js';
import { QueueDirectory } from './queue-directory.js';

/**
 * Registers the ingress routes (production and sandbox), connects the log
 * writer and starts the validation pool when configured.
 */
export async function startIngressRole(ctx: NodeContext): Promise<RoleHandle> {
  const { config } = ctx;
  const cfg = config.ingress;
  const writer = await ctx.eventLog.openWriter();
  const queues = new QueueDirectory(new IngressRepo(ctx.sql), cfg.cacheTtlMs, {
    hopBudget: cfg.hopBudget,
    dedupWindowSeconds: cfg.dedupWindowSeconds,
  });
  const signingKeys = new SigningKeyCache(new SigningKeyRepo(ctx.sql), cfg.cacheTtlMs);
  ctx.bus.onInvalidate(() => {
    queues.invalidate();
    signingKeys.invalidate();
  });
  const validator = createValidator(cfg.validation, cfg.validationThreads, cfg.validationBatchMax);
  const auth = new IngressAuth(ctx.keys, signingKeys, new NonceStore(ctx.cache, cfg.signatureSkewSeconds), validator, {
    skewSeconds: cfg.signatureSkewSeconds,
    paymentsToleranceSeconds: cfg.paymentsToleranceSeconds,
  });
  const deps = {
    queues,
    auth,
    eventLog: writer,
    idempotency: new IdempotencyGate(ctx.cache, {
      pendingTtlMs: cfg.idempotencyPendingTtlMs,
      waitMs: cfg.idempotencyWaitMs,
    }),
    keyMaxBytes: cfg.keyMaxBytes,
    idempotencyKeyMaxBytes: cfg.idempotencyKeyMaxBytes,
    mappedHeaderMaxBytes: cfg.mappedHeaderMaxBytes,
    tracing: ctx.tracing,
  };

  let inFlight = 0;
  const counted = (handle: (ex: Exchange) => Promise<void>) => async (ex: Exchange) => {
    inFlight++;
    try {
      await handle(ex);
    } finally {
      inFlight--;
    }
  };
  ctx.metrics.ingressInFlight = () => inFlight;
  const opts = { maxBodyBytes: config.server.maxBodyBytes };
  ctx.router.add('post', '/events/:tenant/:queue', opts, counted(postEventHandler(deps, false)));
  ctx.router.add('post', '/events/sandbox/:tenant/:queue', opts, counted(postEventHandler(deps, true)));

  return {
    async drain(deadline) {
      // Requests already inside get their answer; the writer flushes what waits.
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await writer.close();
      await validator.close();
    },
  };
}
