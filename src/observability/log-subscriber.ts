import { attemptChannel, type AttemptMessage } from './channels.js';
import type { Logger } from './logger.js';

let subscribed = false;

/** Logs delivery attempts that did not succeed (successes are counted, not logged). */
export function subscribeLogging(log: Logger): void {
  if (subscribed) return;
  subscribed = true;
  const delivery = log.child({ component: 'delivery' });
  attemptChannel.subscribe((message) => {
    const { record: _record, target: _target, ...m } = message as AttemptMessage;
    if (m.outcome === 'retry') delivery.debug(m, 'delivery attempt failed, will retry');
    else if (m.outcome === 'failed') delivery.warn(m, 'delivery failed');
  });
}
