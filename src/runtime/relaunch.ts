/**
 * Runs the CLI again on another Node (the launcher, src/cli.ts, when the
 * user's Node is too old) and makes this process stand for it: stdio
 * inherited, signals passed on, the child's exit code (or signal) its own.
 * node: builtins only, as the launcher runs it on old Node versions too.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** What a supervisor or a terminal sends to stop the CLI; each one is passed on, a second SIGTERM too (it cuts the drain short). */
export const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export function relaunch(node: string, args: readonly string[], env: NodeJS.ProcessEnv): void {
  // A session of its own (detached): a terminal's Ctrl-C goes to its foreground
  // process group, which would then hold both processes and the child would get
  // SIGINT twice (from the terminal and from us), taking the second as "stop
  // now". Detached, every signal reaches the child exactly once: through us.
  const child = spawn(node, args, { stdio: 'inherit', env, detached: true });
  const forward = (signal: NodeJS.Signals) => {
    child.kill(signal);
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  child.once('error', (err) => {
    process.stderr.write(`streamgate: could not start ${node}: ${err.message}\n`);
    process.exit(1);
  });
  child.once('exit', (code, signal) => {
    for (const s of FORWARDED_SIGNALS) process.off(s, forward);
    if (signal === null) process.exit(code ?? 1);
    // Ended by a signal: end the same way, so a shell or supervisor sees what it
    // would have seen without us (our handlers are gone: the default applies).
    process.kill(process.pid, signal);
    // A signal whose default is to carry on (Node ignores SIGPIPE): the shell's convention.
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
  });
}
