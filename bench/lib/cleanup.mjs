import { stopAll } from './children.mjs';
import { say } from './say.mjs';

/**
 * Cleanup that runs once, whichever way the run ends: success, error, Ctrl-C,
 * or an exception thrown outside main()'s promise chain. Children are stopped
 * first (they hold database connections, Kafka group memberships and the
 * embedded log's files), then the registered steps run in reverse order.
 */
const steps = [];
let cleaning = null;

/** Registers a step (database drop, topic delete, folder removal...). */
export function onCleanup(step) {
  steps.push(step);
}

/** True once cleanup began (Ctrl-C, a crash): what is still running is being torn down. */
export function cleanupStarted() {
  return cleaning !== null;
}

export function cleanup() {
  cleaning ??= (async () => {
    await stopAll().catch(() => {});
    for (const step of steps.reverse()) {
      try {
        await step();
      } catch (err) {
        say(`cleanup: ${err.message}`);
      }
    }
  })();
  return cleaning;
}

/** Runs `main` with cleanup on every exit path, then exits. */
export function runWithCleanup(main) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      say(`${signal}: cleaning up`);
      cleanup().finally(() => process.exit(130));
    });
  }
  for (const event of ['uncaughtException', 'unhandledRejection']) {
    process.on(event, (err) => {
      say(`${event}: ${err?.stack ?? err}`);
      cleanup().finally(() => process.exit(1));
    });
  }
  main().then(
    () => cleanup().then(() => process.exit(0)),
    (err) => {
      say(`FAILED: ${err.stack ?? err}`);
      cleanup().finally(() => process.exit(1));
    },
  );
}
