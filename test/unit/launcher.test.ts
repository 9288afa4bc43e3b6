import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { satisfies } from '../../src/runtime/node-range.js';

/**
 * `npx streamgate` as a user runs it: dist/cli.js (the launcher) started by
 * the first node on a PATH without the suite's own Node, i.e. the machine's
 * (Node 20 here). An older one relaunches the CLI on a supported Node
 * (config/runtime/node.sh: the cache test/run.sh filled) and stands for it:
 * output, exit code, signals. A machine whose only node is the suite's runs
 * the same checks in-process.
 */
const root = new URL('../../', import.meta.url);
const CLI = fileURLToPath(new URL('dist/cli.js', root));
const engines = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } }).engines.node;

/** The first `node` on PATH that is not the one running this suite, and that PATH without the suite's node dirs. */
function userNode(): { node: string; PATH: string } {
  const own = realpathSync(process.execPath);
  const isNode = (dir: string) => {
    try {
      accessSync(join(dir, 'node'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d && !(isNode(d) && realpathSync(join(d, 'node')) === own));
  const dir = dirs.find(isNode);
  return { node: dir ? join(dir, 'node') : process.execPath, PATH: dirs.join(delimiter) };
}

const user = userNode();
const env = { ...process.env, PATH: user.PATH };
t.comment(`the user's node: ${user.node}`);

function run(args: string[]): ChildProcess & { out: () => string; done: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(user.node, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.resume();
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return Object.assign(child, { out: () => out, done });
}

async function until(what: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test(`streamgate --help and --version on ${user.node}`, async (t) => {
  const help = run([CLI, '--help']);
  t.same(await help.done, { code: 0, signal: null }, 'exit 0');
  t.match(help.out(), /^usage:\n {2}streamgate start /, 'the usage, on stdout');

  const version = run([CLI, '--version']);
  t.same(await version.done, { code: 0, signal: null });
  const m = /^streamgate \d+\.\d+\.\d+ \(node v(\S+)\)\n$/.exec(version.out());
  t.ok(m && satisfies(m[1]!, engines), `the CLI ran on a Node in ${engines}: ${JSON.stringify(version.out())}`);
});

/**
 * A stand-in for a long command (`start`'s drain): preloaded with --import,
 * which the launcher passes on, it waits in the process that runs the CLI and
 * counts SIGTERMs (the second exits 7); a SIGHUP ends it by that signal.
 */
const WAITER = `
import { readFileSync } from 'node:fs';
import { satisfies } from ${JSON.stringify(new URL('dist/runtime/node-range.js', root).href)};
const engines = JSON.parse(readFileSync(${JSON.stringify(fileURLToPath(new URL('package.json', root)))}, 'utf8')).engines.node;
if (satisfies(process.versions.node, engines)) {
  let terms = 0;
  process.on('SIGTERM', () => {
    terms++;
    process.stdout.write('SIGTERM ' + terms + '\\n');
    if (terms === 2) process.exit(7);
  });
  process.on('SIGHUP', () => {
    process.removeAllListeners('SIGHUP');
    process.kill(process.pid, 'SIGHUP');
  });
  setTimeout(() => process.exit(3), 30_000); // never outlives a failed test for long
  process.stdout.write('waiting on ' + process.version + '\\n');
  await new Promise(() => {});
}
`;

t.test('signals reach the CLI through the launcher, a second SIGTERM too; its exit code is the launcher\'s', async (t) => {
  const dir = t.testdir({ 'waiter.mjs': WAITER });
  const child = run(['--import', pathToFileURL(join(dir, 'waiter.mjs')).href, CLI, '--version']);
  t.teardown(() => void child.kill('SIGKILL'));
  await until(() => /waiting on v\S+\n/.test(child.out()));
  child.kill('SIGTERM');
  await until(() => child.out().includes('SIGTERM 1\n'));
  t.equal(child.exitCode, null, 'still running after the first SIGTERM');
  child.kill('SIGTERM');
  t.same(await child.done, { code: 7, signal: null }, 'the CLI\'s exit code');
  t.match(child.out(), /SIGTERM 2\n/);
});

t.test('a CLI ended by a signal ends the launcher by the same signal', async (t) => {
  const dir = t.testdir({ 'waiter.mjs': WAITER });
  const child = run(['--import', pathToFileURL(join(dir, 'waiter.mjs')).href, CLI, '--version']);
  t.teardown(() => void child.kill('SIGKILL'));
  await until(() => /waiting on v\S+\n/.test(child.out()));
  child.kill('SIGHUP');
  t.same(await child.done, { code: null, signal: 'SIGHUP' });
});
