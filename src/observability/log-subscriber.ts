import { attemptChannel, type AttemptMessage } from './channels.js';
import type { Logger } from './logger.js';

let subscribed = false;

/** Logs delivery attempts that did not succeed (successes are counted, not logged). */
export function subscribeLogging(log: Logger): void {
  if (subscribed) return;
  subscribed = true;
  const delivery = log.child({ component: 'delivery' });
  attemptChannel.subscribe((message) => {
    const { outcome } = message as AttemptMessage;
    // Most attempts succeed: copy the message (without record and target) only when it is logged.
    if (outcome !== 'retry' && outcome !== 'failed') return;
    const { record: _record, target: _target, ...m } = message as AttemptMessage;
    if (outcome === 'retry') delivery.debug(m, 'delivery attempt failed, will retry');
    else delivery.warn(m, 'delivery failed');
  });
}
