import t from 'tap';
import { drainNode } from '../../../src/node/node-drain.js';
import { createLogger } from '../../../src/observability/logger.js';

const log = createLogger('silent');

t.test('not ready first, serving through the delay, then closed, finished, released', async (t) => {
  const steps: Array<[string, number]> = [];
  const start = Date.now();
  let deadline = 0;
  await drainNode(
    {
      markDraining: () => steps.push(['draining', Date.now() - start]),
      stopAccepting: () => steps.push(['closed', Date.now() - start]),
      finish: async (d) => {
        deadline = d;
        steps.push(['finished', Date.now() - start]);
      },
      release: async () => void steps.push(['released', Date.now() - start]),
    },
    { delayMs: 200, shutdownTimeoutMs: 5_000 },
    log,
  );
  t.same(steps.map(([s]) => s), ['draining', 'closed', 'finished', 'released']);
  t.ok(steps[1]![1] >= 190, `the listener closed after the delay (${steps[1]![1]} ms)`);
  t.ok(deadline - start <= 5_000 - 1_000 + 20 && deadline - start >= 5_000 - 1_000 - 20, 'roles get the budget left, minus room to release');
});

t.test('released even when finishing fails', async (t) => {
  let released = false;
  await t.rejects(
    drainNode(
      {
        markDraining: () => {},
        stopAccepting: () => {},
        finish: async () => {
          throw new Error('lane stuck');
        },
        release: async () => void (released = true),
      },
      { delayMs: 0, shutdownTimeoutMs: 2_000 },
      log,
    ),
  );
  t.ok(released);
});
