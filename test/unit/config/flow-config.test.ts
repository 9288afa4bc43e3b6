import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

const dir = mkdtempSync(join(tmpdir(), 'streamgate-flow-config-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function withFile(yaml: string) {
  const file = join(dir, `c-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, yaml);
  return loadConfig({ STREAMGATE_CONFIG: file });
}

t.test('delivery.flow defaults (docs/flow-control.md)', async (t) => {
  const { delivery } = loadConfig({});
  t.same(delivery.flow, { maxConcurrency: 1000, maxRatePerSecond: 0, initialConcurrency: 16, maxPauseMs: 60_000 });
  t.equal(delivery.maxSocketsPerOrigin, 2048, 'the per-origin cap sits above the per-target ceiling');
});

t.test('delivery.flow values are checked, naming the key', async (t) => {
  for (const [yaml, key] of [
    ['delivery:\n  flow:\n    maxConcurrency: 0\n', 'delivery.flow.maxConcurrency'],
    ['delivery:\n  flow:\n    maxConcurrency: 10001\n', 'delivery.flow.maxConcurrency'],
    ['delivery:\n  flow:\n    maxRatePerSecond: -1\n', 'delivery.flow.maxRatePerSecond'],
    ['delivery:\n  flow:\n    initialConcurrency: 1.5\n', 'delivery.flow.initialConcurrency'],
    ['delivery:\n  flow:\n    maxPauseMs: "60s"\n', 'delivery.flow.maxPauseMs'],
    ['delivery:\n  flow:\n    window: 3\n', 'delivery.flow.window'],
  ]) {
    let err: unknown = null;
    try {
      withFile(yaml!);
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof ConfigError && err.message.includes(key!), `${key}: ${String(err)}`);
  }
  t.equal(withFile('delivery:\n  flow:\n    maxRatePerSecond: 2.5\n').delivery.flow.maxRatePerSecond, 2.5, 'a rate may be a fraction');
});
