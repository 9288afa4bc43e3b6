import t from 'tap';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

t.test('metrics defaults: on, public port, no token, no per-target labels', async (t) => {
  const config = loadConfig({}, {});
  t.same(config.metrics, { enabled: true, token: '', perTarget: false, maxTargets: 100, eventLoopResolutionMs: 100 });
  t.equal(config.server.metricsPort, 0);
});

t.test('STREAMGATE_METRICS_PORT and STREAMGATE_METRICS_TOKEN set server.metricsPort and metrics.token', async (t) => {
  const config = loadConfig({ STREAMGATE_METRICS_PORT: '9464', STREAMGATE_METRICS_TOKEN: 'tok-1' }, {});
  t.equal(config.server.metricsPort, 9464);
  t.equal(config.metrics.token, 'tok-1');
});

t.test('bad metrics settings stop the boot with the key in the message', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ server: { metricsPort: 70000 } }, 'server.metricsPort'],
    [{ metrics: { maxTargets: 0 } }, 'metrics.maxTargets'],
    // A header value cannot carry it: the token must be visible ASCII.
    [{ metrics: { token: 'two words' } }, 'metrics.token'],
    [{ metrics: { enabled: 'yes' } }, 'metrics.enabled'],
    [{ metrics: { eventLoopResolutionMs: 5 } }, 'metrics.eventLoopResolutionMs'],
  ];
  for (const [overrides, key] of cases) {
    let err: unknown = null;
    try {
      loadConfig({}, overrides);
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof ConfigError && err.message.includes(key), `${key}: ${String(err)}`);
  }
});
