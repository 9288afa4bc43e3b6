import { freshBackends } from './backends.js';
import { bootstrapDatabase, clientFor, startTestNode } from './nodes.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { createLinkToken, linkUrl } from '../../src/auth/console-sessions.js';
import { ConsoleSessionRepo } from '../../src/storage/console-session-repo.js';
import { connectDatabase } from '../../src/storage/db.js';
import { TopologyRepo } from '../../src/storage/topology-repo.js';
import type { MemberRole } from '../../src/storage/membership-repo.js';
import type { ConsoleTab } from './browser.js';
import { bootstrap, type BootstrapResult } from '../../src/api/setup/bootstrap.js';

/** A fresh database and a node with every role, as each browser test starts: its URL, an API client and the workspace id. */
export async function startConsoleNode(t: Test, extra: Record<string, unknown> = {}) {
  const backends = await freshBackends(t);
  const creds = await bootstrapDatabase(backends.databaseUrl);
  const node = await startTestNode(t, backends, extra);
  return { backends, creds, node, base: `http://127.0.0.1:${node.port}`, api: clientFor(node.port, creds), T: creds.tenantPublicId };
}

/** A one-time console sign-in link, as `streamgate admin console-link` prints it. */
export async function consoleLink(databaseUrl: string, base: string, tenant: string, role: MemberRole): Promise<string> {
  const sql = connectDatabase(databaseUrl, 1);
  try {
    const ws = await new TopologyRepo(sql).workspaceByPublicId(tenant);
    if (!ws) throw new Error(`no workspace ${tenant}`);
    const { token } = await createLinkToken(new ConsoleSessionRepo(sql), ws.id, role);
    return linkUrl(base, token);
  } finally {
    await sql.end();
  }
}

/** Another license with a workspace and keys, in the same database (a partner that already has an account). */
export async function bootstrapLicense(databaseUrl: string, email: string): Promise<BootstrapResult> {
  const sql = connectDatabase(databaseUrl, 1);
  try {
    return await bootstrap(sql, email);
  } finally {
    await sql.end();
  }
}

/** Runs one SQL statement against the test database (e.g. to make a session expire). */
export async function sqlOnce(databaseUrl: string, statement: string): Promise<void> {
  const sql = connectDatabase(databaseUrl, 1);
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end();
  }
}

/** An HTTP server on another port of the same host (same site, another origin) serving one page. */
export async function otherOrigin(t: Test, html: string): Promise<string> {
  const server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/**
 * What every console test checks at the end: no console error or uncaught
 * exception on any page, and no refused request but the ones it expects.
 */
export function checkTab(t: Test, tab: ConsoleTab, expected: Array<{ path: string | RegExp; status: number }>): void {
  t.comment(`${tab.shotDir.split('/').pop()}: ms spent ${JSON.stringify(tab.spent)}`);
  t.same(tab.errors, [], `${tab.shotDir.split('/').pop()}: no error in the browser console`);
  const unexpected = tab.refusals.filter((r) => {
    const path = new URL(r.url).pathname;
    return !expected.some((e) => e.status === r.status && (typeof e.path === 'string' ? e.path === path : e.path.test(path)));
  });
  t.same(unexpected, [], `${tab.shotDir.split('/').pop()}: no refused request but the expected ones`);
}

/** Signs `tab` in through the form with the license id and Build key. */
export async function signInWithKey(tab: ConsoleTab, licensePublicId: string, key: string, expect: string): Promise<void> {
  await tab.go();
  await tab.waitText('License ID');
  await tab.fill('License ID', licensePublicId);
  await tab.fill('API key', key);
  await tab.click('Sign in');
  await tab.waitText(expect);
}

/**
 * Reloads `hash` until the page shows `needle` (data the service writes
 * asynchronously, e.g. delivery results); with `selector`, until that element's
 * text is exactly `needle`.
 */
export async function eventually(tab: ConsoleTab, hash: string, needle: string, selector?: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  await tab.go(hash);
  for (;;) {
    const seen = selector ? await tab.page.$eval(selector, (el) => el.textContent?.trim() ?? '').catch(() => '') : null;
    if (seen === null ? (await tab.text()).includes(needle) : seen === needle) return;
    if (Date.now() > until) throw new Error(`${hash} never showed ${JSON.stringify(needle)}; it shows:\n${(await tab.text()).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 500));
    await tab.page.reload({ waitUntil: 'networkidle0' });
    await tab.settled();
  }
}
