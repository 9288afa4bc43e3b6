import { Writable } from 'node:stream';
import type { Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/observability/logger.js';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { backendConfig, type Backends } from './backends.js';

/** Every line a node logged, as text and parsed. */
export class CapturedLog {
  readonly lines: string[] = [];

  get text(): string {
    return this.lines.join('');
  }

  entries(): Array<Record<string, unknown>> {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  stream(): Writable {
    return new Writable({
      write: (chunk, _encoding, done) => {
        this.lines.push(String(chunk));
        done();
      },
    });
  }
}

/** Starts an in-process node whose pino output (at `level`) goes into a CapturedLog. */
export async function startLoggedNode(t: Test, backends: Backends, extra: Record<string, unknown> = {}, level = 'debug'): Promise<{ node: RunningNode; log: CapturedLog }> {
  const captured = new CapturedLog();
  const config = loadConfig({}, backendConfig(backends, extra));
  const node = await startNode(config, createLogger(level, 'streamgate', captured.stream()));
  t.teardown(() => node.stop());
  return { node, log: captured };
}
