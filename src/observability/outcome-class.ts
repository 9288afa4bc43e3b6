import type { AttemptMessage } from './channels.js';

/** The outcome classes of the attempts counter (docs/metrics.md). */
export type OutcomeClass = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'network' | 'ssrf';

/**
 * Classifies a delivery attempt by what came back: a response by its status
 * class, otherwise by the kind of failure (a refused address is `ssrf`,
 * a missed deadline `timeout`, anything else on the wire `network`).
 */
export function outcomeClass(message: Pick<AttemptMessage, 'status' | 'failureKind'>): OutcomeClass {
  const { status } = message;
  if (status !== null) {
    if (status < 300) return '2xx';
    if (status < 400) return '3xx';
    if (status < 500) return '4xx';
    return '5xx';
  }
  const kind = message.failureKind ?? 'network';
  if (kind === 'refused-address') return 'ssrf';
  if (kind === 'timeout') return 'timeout';
  return 'network';
}
