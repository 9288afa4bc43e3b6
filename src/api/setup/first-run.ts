import type { Sql } from '../../storage/db.js';
import { LicenseRepo } from '../../storage/license-repo.js';
import { TopologyRepo } from '../../storage/topology-repo.js';
import { ConsoleSessionRepo } from '../../storage/console-session-repo.js';
import { createLinkToken, linkUrl } from '../../auth/console-sessions.js';

export interface FirstRunInfo {
  licensePublicId: string;
  tenantPublicId: string;
  buildKey: string;
  ingressKey: string;
  queue: string;
  targetUrl: string | null;
  /** A one-time console sign-in link token for the new workspace's Owner (10 minutes). */
  consoleLinkToken: string;
}

/**
 * On a database with no license yet, creates what a first event needs: a
 * license, a workspace, a Build key and an ingress key, a queue `events`, and
 * (single machine) a target pointing at this node's /dev/sink routed from it.
 * Returns null when the database already had a license.
 */
export async function firstRunBootstrap(sql: Sql, port: number, withSink: boolean): Promise<FirstRunInfo | null> {
  // Two nodes starting at once on an empty database: one bootstraps.
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(7431022616)`;
    const [row] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM licenses`;
    if (row!.n > 0) return null;
    const licenses = new LicenseRepo(tx as unknown as Sql);
    const topology = new TopologyRepo(tx as unknown as Sql);
    const license = await licenses.createLicense('admin@localhost');
    const workspace = await licenses.createWorkspace(license.id, 'default');
    const build = await licenses.createKey({ licenseId: license.id, workspaceId: workspace.id, profile: 'build', name: 'first-run build key' });
    const ingress = await licenses.createKey({ licenseId: license.id, workspaceId: workspace.id, profile: 'ingress', name: 'first-run ingress key' });
    const queue = await topology.upsertQueue(workspace.id, 'events', {});
    let targetUrl: string | null = null;
    if (withSink) {
      targetUrl = `http://127.0.0.1:${port}/dev/sink`;
      const target = await topology.upsertTarget(workspace.id, 'sink', targetUrl, {});
      await topology.addRoute(queue.row.id, target.row.id);
    }
    const link = await createLinkToken(new ConsoleSessionRepo(tx as unknown as Sql), workspace.id, 'Owner');
    return {
      consoleLinkToken: link.token,
      licensePublicId: license.publicId,
      tenantPublicId: workspace.publicId,
      buildKey: build.wire,
      ingressKey: ingress.wire,
      queue: 'events',
      targetUrl,
    };
  });
}

/**
 * What `streamgate start` prints after a first-run bootstrap (keys shown this
 * once). `publicUrl` (console.publicUrl) is where browsers reach the console.
 */
export function firstRunMessage(info: FirstRunInfo, port: number, publicUrl = ''): string {
  const base = `http://127.0.0.1:${port}`;
  const consoleBase = publicUrl || base;
  const lines = [
    '',
    'streamgate: first run, created a workspace and keys. The keys are shown this once; keep them.',
    `  license      ${info.licensePublicId}`,
    `  workspace    ${info.tenantPublicId}`,
    `  build key    ${info.buildKey}     (management API, with X-License-PublicId)`,
    `  ingress key  ${info.ingressKey}     (posting events)`,
    `  queue        ${info.queue}`,
    info.targetUrl ? `  target       sink -> ${info.targetUrl}` : '  target       none yet: PUT /v1/tenants/{tenant}/targets/{name}, then route the queue to it',
    '',
    'Post a first event:',
    `  curl -i -X POST ${base}/events/${info.tenantPublicId}/${info.queue} \\`,
    `    -H 'X-Api-Key: ${info.ingressKey}' -H 'Content-Type: application/json' \\`,
    `    -d '{"hello":"world"}'`,
  ];
  lines.push(
    'Open the console:',
    `  ${consoleBase}/console/`,
    '  sign in as the Owner with this one-time link (valid 10 minutes; later: streamgate admin console-link):',
    `  ${linkUrl(consoleBase, info.consoleLinkToken)}`,
  );
  if (info.targetUrl) lines.push('See it delivered:', `  curl ${base}/dev/sink`);
  return `${lines.join('\n')}\n`;
}
