import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../helpers/nodes.js';

const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));

/**
 * A newcomer's machine: no DATABASE_URL, REDIS_URL or KAFKA_BROKERS. The
 * service must start on its embedded backends (embedded PostgreSQL included),
 * bootstrap itself, print a curl command that works, and deliver the event to
 * the printed target.
 */
t.test('first run on embedded backends: printed curl gets 202 and a delivery to the printed target', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sg-first-run-'));
  chmodSync(dir, 0o755); // PostgreSQL (run as user postgres when we are root) must enter it
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const pgPort = await freePort();
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, `database:\n  embeddedPort: ${pgPort}\nlog:\n  level: warn\n`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    PORT: String(port),
    STREAMGATE_DATA_DIR: join(dir, 'data'),
    STREAMGATE_CONFIG: configFile,
  };

  const start = (): { child: ChildProcess; output: () => string; stopped: Promise<number | null> } => {
    const child = spawn(process.execPath, [CLI, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const stopped = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    t.teardown(() => void child.kill('SIGKILL'));
    return { child, output: () => out, stopped };
  };
  const waitFor = async (what: string, test: () => boolean, ms = 60_000) => {
    const until = Date.now() + ms;
    while (!test()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const first = start();
  await waitFor('the first-run message', () => first.output().includes('See it delivered'));
  const out = first.output();
  const curl = /curl -i -X POST (\S+) \\\n\s+-H '([^']+)' -H '([^']+)' \\\n\s+-d '([^']+)'/.exec(out);
  t.ok(curl, 'a copy-paste curl command is printed');
  const [, url, h1, h2, body] = curl!;
  const headers = Object.fromEntries([h1!, h2!].map((h) => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1).trim()]));
  const posted = await fetch(url!, { method: 'POST', headers, body });
  t.equal(posted.status, 202);
  const { eventId } = (await posted.json()) as { eventId: string };
  const target = /target\s+sink -> (\S+)/.exec(out)![1]!;
  let deliveries: Array<{ eventId: string; body: string }> = [];
  const poll = async () => {
    deliveries = ((await (await fetch(target)).json()) as { deliveries: typeof deliveries }).deliveries;
  };
  const until = Date.now() + 30_000;
  while (!deliveries.some((d) => d.eventId === eventId) && Date.now() < until) {
    await poll();
    await new Promise((r) => setTimeout(r, 100));
  }
  const got = deliveries.find((d) => d.eventId === eventId);
  t.ok(got, 'the printed target received the event');
  t.equal(got?.body, body);

  // The console URL and a one-time Owner link are printed beside the curl command.
  t.match(out, new RegExp(`Open the console:\\n\\s+http://127\\.0\\.0\\.1:${port}/console/\\n`), 'the console URL is printed');
  const link = /(http:\/\/\S+\/console\/auth\/link\?token=\S+)/.exec(out)?.[1];
  t.ok(link, 'a one-time sign-in link is printed');
  const signedIn = await fetch(link!, { redirect: 'manual' });
  t.equal(signedIn.status, 303);
  const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith('sg_console='))?.split(';')[0];
  t.ok(cookie, 'the link signs in');
  const session = (await (await fetch(`http://127.0.0.1:${port}/console/api/session`, { headers: { cookie: cookie! } })).json()) as { workspaces: Array<{ role: string }> };
  t.same(session.workspaces.map((w) => w.role), ['Owner'], 'as the Owner of the new workspace');
  t.equal((await fetch(link!, { redirect: 'manual' })).headers.get('location'), '/console/?signin_error=link_invalid', 'once');

  first.child.kill('SIGTERM');
  t.equal(await first.stopped, 0, 'SIGTERM stops it cleanly');

  const second = start();
  await waitFor('the second start', () => second.output().includes('serving on port'));
  t.notMatch(second.output(), /qak_/, 'later runs print no keys');
  t.match(second.output(), /streamgate admin keys/, 'later runs say how to list keys');
  second.child.kill('SIGTERM');
  await second.stopped;
});
