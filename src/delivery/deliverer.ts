import { setTimeout as sleep } from 'node:timers/promises';
import type { EventRecord } from '../log/event-record.js';
import { attemptChannel, type AttemptMessage } from '../observability/channels.js';
import type { RouteTarget } from '../routing/route-table.js';
import type { HttpDispatcher } from './http-dispatcher.js';
import { classify } from './outcome.js';
import { outboundHeaders } from './outbound-headers.js';

export type FinalOutcome = 'delivered' | 'failed' | 'abandoned';

export interface RetryTiming {
  initialMs: number;
  maxMs: number;
}

/**
 * Delivers one event to one target until it is delivered, fails for good, or
 * the caller gives up (its partition was revoked or the process drains). The
 * caller keeps the record uncommitted until this resolves, so a crash while
 * retrying replays it rather than losing it.
 */
export class Deliverer {
  constructor(
    private readonly dispatcher: HttpDispatcher,
    private readonly timing: RetryTiming,
  ) {}

  async deliver(record: EventRecord, target: RouteTarget, signal: AbortSignal): Promise<FinalOutcome> {
    const headers = outboundHeaders(record, target);
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return 'abandoned';
      const result = await this.dispatcher.send({ url: target.url, headers, body: record.body, timeoutMs: target.settings.timeoutMs });
      const outcome = classify(result, target.settings.retryPolicy?.retryableStatuses);
      if (attemptChannel.hasSubscribers) {
        const message: AttemptMessage = {
          record,
          target,
          eventId: record.id,
          targetPublicId: target.publicId,
          attempt,
          outcome: outcome.kind,
          status: result.kind === 'response' ? result.status : null,
          reason: outcome.kind === 'delivered' ? null : outcome.reason,
          durationMs: result.durationMs,
        };
        attemptChannel.publish(message);
      }
      if (outcome.kind === 'delivered') return 'delivered';
      if (outcome.kind === 'failed') return 'failed';
      const backoff = Math.min(this.timing.maxMs, this.timing.initialMs * 2 ** Math.min(attempt - 1, 30));
      const jittered = backoff * (0.8 + Math.random() * 0.4);
      try {
        await sleep(Math.max(outcome.retryAfterMs ?? 0, jittered), undefined, { signal });
      } catch {
        return 'abandoned';
      }
    }
  }
}
