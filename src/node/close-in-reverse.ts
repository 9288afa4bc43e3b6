import type { Logger } from '../observability/logger.js';

/** Something a node opened and must close when it stops. */
export type Closer = () => Promise<void> | void;

/**
 * Closes what a node opened, last opened first. Each closer gets `waitMs`:
 * one that hangs (a client waiting on a peer that went away) is left behind
 * and named in the log, so that stopping always returns and the others still
 * close; one that throws is logged and the next goes on.
 */
export async function closeInReverse(closers: Closer[], waitMs: number, log: Logger): Promise<void> {
  for (const close of closers.splice(0).reverse()) {
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      Promise.resolve()
        .then(close)
        .then(
          () => 'closed' as const,
          (err: unknown) => {
            log.warn({ err }, 'error while closing');
            return 'failed' as const;
          },
        ),
      new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs))),
    ]);
    clearTimeout(timer);
    if (outcome === 'late') log.error({ closer: close.toString().slice(0, 120), waitedMs: waitMs }, 'did not close in time; left behind so the stop completes');
  }
}
