#!/usr/bin/env node
/**
 * The `streamgate` command (package.json "bin"; `npx streamgate`). npx runs it
 * on the first node on PATH, which may be older than the project supports
 * (package.json "engines"). On a supported Node it runs the CLI
 * (src/cli-main.ts) in this process; on an older one it gets a supported
 * Node from config/runtime/node.sh (the one on PATH, the cache, or Node 24
 * fetched from the npm registry) and runs itself again there.
 *
 * Loaded by old Node versions too: it imports only node: builtins and
 * dependency-free modules of its own, never the CLI, before the check.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { satisfies } from './runtime/node-range.js';
import { relaunch } from './runtime/relaunch.js';

const engines = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node;

if (satisfies(process.versions.node, engines)) {
  await import('./cli-main.js');
} else {
  const bin = supportedNodeBin();
  relaunch(join(bin, 'node'), [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    ...process.env,
    PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
    // Relaunched once only: a node.sh that handed back an unsupported Node must not loop.
    STREAMGATE_RELAUNCHED_FROM: process.version,
  });
}

function supportedNodeBin(): string {
  const tooOld = `needs Node.js ${engines}; this is ${process.version}`;
  if (process.env.STREAMGATE_RELAUNCHED_FROM) fail(`${tooOld} (relaunched from ${process.env.STREAMGATE_RELAUNCHED_FROM})`);
  try {
    // stdout: the bin dir; stderr (a fetch's progress, errors) goes to the user.
    const script = fileURLToPath(new URL('../config/runtime/node.sh', import.meta.url));
    return execFileSync('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
  } catch {
    return fail(`${tooOld}, and none could be found or fetched (above). Install Node.js 24 LTS, or set STREAMGATE_NODE to a node binary.`);
  }
}

function fail(message: string): never {
  process.stderr.write(`streamgate: ${message}\n`);
  process.exit(1);
}
