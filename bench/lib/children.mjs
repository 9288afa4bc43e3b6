import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Every child process the bench starts is registered here, so that whatever
 * happens (an exception, Ctrl-C, a crash of the orchestrator) none is left
 * running holding a port, a Kafka group membership or a database connection.
 */
const live = new Set();
// Set once cleanup began: a phase still running must not start new children.
let closing = false;

// Last resort: 'exit' handlers must be synchronous, so only a hard kill is possible here.
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function track(child, name) {
  child.benchName = name;
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (closing) child.kill('SIGKILL');
  return child;
}

/** A Node child with an IPC channel (receiver, bare server). */
export function forkChild(name, modulePath, args = [], options = {}) {
  return track(fork(modulePath, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...options }), name);
}

/**
 * A Node child without IPC (the streamgate CLI), stdout/stderr piped to the
 * caller. `node`: the node binary (default: the one running the bench), e.g.
 * an older build's on the Node it needs.
 */
export function spawnNode(name, args, { node = process.execPath, ...options } = {}) {
  return track(spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options }), name);
}

/** Resolves with the first IPC message of `type`; rejects if the child exits first. */
export function waitForMessage(child, type, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`${child.benchName}: no '${type}' message within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (msg) => msg?.type === type && done(null, msg);
    const onExit = (code, signal) => done(new Error(`${child.benchName} exited (${signal ?? code}) before '${type}'`));
    function done(err, msg) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      err ? reject(err) : resolve(msg);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/**
 * Asks a child to stop with SIGTERM (streamgate drains on it) and escalates to
 * SIGKILL after `graceMs`. Resolves with how it ended and how long it took.
 */
export async function stopChild(child, graceMs = 20_000) {
  const started = performance.now();
  if (child.exitCode !== null || child.signalCode !== null) {
    return { code: child.exitCode, signal: child.signalCode, ms: 0, killed: false };
  }
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, graceMs);
  const [code, signal] = await exited;
  clearTimeout(timer);
  return { code, signal, ms: Math.round(performance.now() - started), killed };
}

/** The children running now, to stop later only those started after this point. */
export function snapshot() {
  return new Set(live);
}

/** Stops the children started since `before` (a phase that failed), leaving the others. */
export async function stopStartedSince(before, graceMs = 5_000) {
  await Promise.all([...live].filter((child) => !before.has(child)).map((child) => stopChild(child, graceMs)));
}

/** Stops every child still running (used by the orchestrator's cleanup path). */
export async function stopAll(graceMs = 5_000) {
  closing = true;
  await Promise.all([...live].map((child) => stopChild(child, graceMs)));
}
