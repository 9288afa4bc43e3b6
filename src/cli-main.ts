/**
 * The streamgate CLI. Run through the launcher, dist/cli.js (src/cli.ts),
 * which imports this module once the Node running it is a supported one.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/load-config.js';
import { ROLES, type Role } from './config/schema.js';
import { createLogger } from './observability/logger.js';
import { connectDatabase, type Sql } from './storage/db.js';
import { openDatabase } from './node/backends.js';
import { migrate } from './storage/migrate.js';
import { bootstrap } from './api/setup/bootstrap.js';
import { listenNode, type ListeningNode, type RunningNode } from './node/node.js';
import { KafkaUnavailableError } from './event-log/kafka/kafka-failure.js';
import { DependencyFailedError } from './util/until-up.js';
import { firstRunMessage } from './api/setup/first-run.js';
import { applyDeploy } from './deploy/apply-deploy.js';
import { DeployFileError, readDeployFile } from './deploy/deploy-file.js';
import { TopologyRepo } from './storage/topology-repo.js';
import { KeyRepo } from './storage/key-repo.js';
import { SigningKeyRepo } from './storage/signing-key-repo.js';
import { KeyEncryption } from './storage/key-encryption.js';
import { RedisCacheStore } from './cache/redis-cache-store.js';
import { InvalidationBus } from './cache/invalidation-bus.js';
import { MEMBER_ROLES, MembershipRepo, type MemberRole } from './storage/membership-repo.js';
import { ConsoleSessionRepo } from './storage/console-session-repo.js';
import { createLinkToken, linkUrl } from './auth/console-sessions.js';
import { planThreads } from './node/threads/thread-count.js';
import { listenThreadedNode, type ThreadedNode } from './node/threads/threaded-node.js';

const USAGE = `usage:
  streamgate start [--roles ingress,delivery,management] [--threads N]
  streamgate deploy FILE
  streamgate migrate
  streamgate admin bootstrap --email EMAIL [--json]
  streamgate admin keys [--json]
  streamgate admin revoke KEY_ID
  streamgate admin grant --tenant ten_... --subject SUB --role Owner|Admin|Member
  streamgate admin console-link --tenant ten_... --role Owner|Admin|Member
  streamgate admin reencrypt-signing-keys
  streamgate --version
  streamgate --help`;

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    case '--version':
    case '-v':
    case 'version':
      // The Node too: `npx streamgate` may have relaunched itself on another one (src/cli.ts).
      process.stdout.write(`streamgate ${packageVersion()} (node ${process.version})\n`);
      return 0;
    case 'start':
      return start(rest);
    case 'migrate':
      return runMigrate();
    case 'deploy':
      return runDeploy(rest);
    case 'admin':
      if (rest[0] === 'bootstrap') return runBootstrap(rest.slice(1));
      if (rest[0] === 'keys') return runListKeys(rest.slice(1));
      if (rest[0] === 'revoke') return runRevoke(rest.slice(1));
      if (rest[0] === 'grant') return runGrant(rest.slice(1));
      if (rest[0] === 'console-link') return runConsoleLink(rest.slice(1));
      if (rest[0] === 'reencrypt-signing-keys' && rest.length === 1) return runReencryptSigningKeys();
      break;
  }
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

async function start(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { roles: { type: 'string' }, threads: { type: 'string' } }, strict: true });
  const overrides: Record<string, unknown> = {};
  if (values.threads !== undefined) overrides.server = { threads: threadsFlag(values.threads) };
  if (values.roles) {
    const roles = values.roles.split(',').map((r) => r.trim()).filter(Boolean);
    const bad = roles.filter((r) => !ROLES.includes(r as Role));
    if (bad.length > 0 || roles.length === 0) throw new ConfigError([`--roles: unknown role(s) ${bad.join(', ')}; use ${ROLES.join(', ')}`]);
    overrides.roles = roles;
  }
  const config = loadConfig(process.env, overrides);
  const log = createLogger(config.log.level);
  // Signal handlers first: the embedded PostgreSQL's loader drops process hooks added while it
  // loads (src/storage/embedded-postgres.ts), and the roles may be loading it when the port opens.
  // SIGTERM/SIGINT start the graceful drain (src/node/node-drain.ts); a second signal, or
  // server.shutdownTimeoutMs passing, exits at once with code 1.
  let node: ListeningNode | null = null;
  let signals = 0;
  let exitCode: number | null = null;
  let markStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  const finish = (code: number) => {
    if (exitCode !== null) return;
    exitCode = code;
    markStopped();
  };
  const drainNode = () =>
    node!.drain().then(
      () => finish(0),
      (err: unknown) => {
        log.error({ err }, 'error while stopping');
        finish(1);
      },
    );
  const onSignal = (signal: string) => {
    signals++;
    if (signals > 1) {
      log.warn({ signal }, 'second signal: exiting without finishing the drain');
      finish(1);
      return;
    }
    log.info({ signal, drainDelayMs: config.server.drainDelayMs }, 'draining');
    setTimeout(() => {
      log.error({ shutdownTimeoutMs: config.server.shutdownTimeoutMs }, 'shutdown timed out: exiting without finishing the drain');
      finish(1);
    }, config.server.shutdownTimeoutMs).unref();
    if (node) void drainNode();
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // The port opens first: /livez and /readyz answer while the roles wait for their backends.
  const plan = planThreads(config);
  // Asked for by number: a warning; the default (0, every core) on the embedded backends: a note.
  if (plan.singleBecause) log[config.server.threads > 1 ? 'warn' : 'info']({ threads: config.server.threads, reason: plan.singleBecause }, 'running on one thread');
  node = plan.threads > 1 ? await listenThreadedNode(config, plan.threads, log) : await listenNode(config, log);
  if (signals > 0) void drainNode();
  let running: RunningNode;
  try {
    running = await node.up;
  } catch (err) {
    // Stopped while still waiting for a dependency: a normal stop, not a failed start.
    if (signals > 0) {
      await stopped;
      await exitThreads(node);
      return exitCode ?? 0;
    }
    throw err;
  }
  // Printed, not logged: the first-run keys must not end up in log storage.
  if (running.firstRun) process.stdout.write(firstRunMessage(running.firstRun, running.port, config.console.publicUrl));
  // On stderr: stdout carries only the JSON log lines, which log shippers parse.
  else process.stderr.write(`streamgate: serving on port ${running.port}. Keys are shown once at creation; list them with \`streamgate admin keys\`.\n`);
  await stopped;
  await exitThreads(node);
  return exitCode ?? 0;
}

/** A threaded node's other threads end before the process does (after a finished drain they are gone already). */
async function exitThreads(node: ListeningNode | null): Promise<void> {
  await (node as Partial<ThreadedNode> | null)?.exitThreads?.();
}

/** `--threads N`: a whole number, 0 for the cores the process may use (validation names the bounds). */
function threadsFlag(value: string): number | string {
  return /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
}

async function runDeploy(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, strict: true });
  if (positionals.length !== 1) {
    process.stderr.write('deploy needs exactly one FILE\n');
    return 2;
  }
  let file;
  try {
    file = readDeployFile(positionals[0]!);
  } catch (err) {
    if (!(err instanceof DeployFileError)) throw err;
    process.stderr.write(`${positionals[0]}:\n  ${err.problems.join('\n  ')}\n`);
    return 2;
  }
  const lines = await applyDeploy(file);
  for (const line of lines) process.stdout.write(`${line.change.padEnd(9)} ${line.object}${line.detail ? `  ${line.detail}` : ''}\n`);
  const failed = lines.filter((l) => l.change === 'failed').length;
  const count = (c: string) => lines.filter((l) => l.change === c).length;
  process.stdout.write(`${count('created')} created, ${count('changed')} changed, ${count('unchanged')} unchanged, ${failed} failed\n`);
  return failed > 0 ? 1 : 0;
}

/** Runs `work` against the configured database (the embedded one when no DATABASE_URL). */
async function withDatabase<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase(config, createLogger(config.log.level === 'info' ? 'warn' : config.log.level));
  const sql = connectDatabase(db.url, 2);
  try {
    await migrate(sql);
    return await work(sql);
  } finally {
    await sql.end({ timeout: 5 });
    await db.stop?.();
  }
}

/**
 * `streamgate admin revoke KEY_ID`: revokes an API key (a leaked one) by its
 * id, whatever its workspace. With Redis configured every running node drops
 * its key cache at once (the invalidation bus); otherwise within
 * ingress.cacheTtlMs. Idempotent: a key revoked before is reported, exit 0.
 */
async function runRevoke(args: string[]): Promise<number> {
  const keyId = args[0];
  if (!keyId || args.length !== 1 || !/^key_[A-Za-z0-9_-]+$/.test(keyId)) {
    process.stderr.write('admin revoke needs one API key id (key_…, as `streamgate admin keys` lists them)\n');
    return 2;
  }
  const outcome = await withDatabase(async (sql) => {
    const exists = (await sql`SELECT 1 FROM api_keys WHERE key_id = ${keyId}`).length > 0;
    return exists ? ((await new KeyRepo(sql).revokeAnywhere(keyId)) ? 'revoked' : 'already revoked') : 'unknown';
  });
  if (outcome === 'unknown') {
    process.stderr.write(`no API key ${keyId}\n`);
    return 1;
  }
  const config = loadConfig();
  if (outcome === 'revoked' && config.redis.url) {
    const store = new RedisCacheStore(config.redis.url, config.redis.keyPrefix, createLogger('warn'));
    try {
      await new InvalidationBus(store).publish('key');
    } finally {
      await store.close();
    }
  }
  process.stdout.write(`${keyId} ${outcome}\n`);
  return 0;
}

/**
 * `streamgate admin reencrypt-signing-keys`: after a rotation of
 * signing.keyEncryptionKey, rewrites the ed25519 private keys still encrypted
 * under one of signing.previousKeyEncryptionKeys under the current key.
 * Idempotent; safe while nodes run (each row is a compare-and-set). Exit 1 when
 * a key decrypts with none of the configured keys (it is named, not changed).
 */
async function runReencryptSigningKeys(): Promise<number> {
  const config = loadConfig();
  const encryption = KeyEncryption.fromSetting(config.signing.keyEncryptionKey, config.signing.previousKeyEncryptionKeys);
  if (!encryption) {
    process.stderr.write('signing.keyEncryptionKey is not set (env STREAMGATE_KEY_ENCRYPTION_KEY): nothing to re-encrypt under\n');
    return 2;
  }
  const result = await withDatabase((sql) => new SigningKeyRepo(sql).reencryptEd25519(encryption));
  process.stdout.write(`ed25519 signing keys: ${result.rewritten} re-encrypted under the current key, ${result.current} already under it\n`);
  if (result.undecryptable.length === 0) return 0;
  process.stderr.write(`${result.undecryptable.length} decrypt with none of the configured keys (left as they are): ${result.undecryptable.join(', ')}\n`);
  return 1;
}

async function runMigrate(): Promise<number> {
  await withDatabase(async () => process.stdout.write('database is up to date\n'));
  return 0;
}

async function runListKeys(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' } }, strict: true });
  const keys = await withDatabase((sql) => sql<{ keyId: string; profile: string; workspace: string | null; license: string; name: string | null; createdAt: Date; revoked: boolean }[]>`
    SELECT k.key_id AS "keyId", k.profile, w.public_id AS workspace, l.public_id AS license, k.name,
           k.created_at AS "createdAt", (k.revoked_at IS NOT NULL) AS revoked
    FROM api_keys k JOIN licenses l ON l.id = k.license_id LEFT JOIN workspaces w ON w.id = k.workspace_id
    ORDER BY k.created_at`);
  if (values.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
  else {
    for (const k of keys) {
      process.stdout.write(`${k.keyId}  ${k.profile.padEnd(7)}  ${k.license}  ${k.workspace ?? '(license-wide)'}  ${k.revoked ? 'revoked' : 'active'}  ${k.name ?? ''}\n`);
    }
    process.stdout.write('Secrets are never stored; create a new key with POST /v1/tenants/{tenant}/keys if one was lost.\n');
  }
  return 0;
}

async function runBootstrap(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, json: { type: 'boolean' } }, strict: true });
  if (!values.email || !/^[^\s@]+@[^\s@]+$/.test(values.email)) {
    process.stderr.write('admin bootstrap needs --email with an e-mail address\n');
    return 2;
  }
  return withDatabase(async (sql) => {
    const result = await bootstrap(sql, values.email!);
    if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      process.stdout.write(
        `license:     ${result.licensePublicId}\nworkspace:   ${result.tenantPublicId}\n` +
          `build key:   ${result.buildKey}\ningress key: ${result.ingressKey}\n` +
          'The keys are shown once; store them now.\n',
      );
    }
    return 0;
  });
}

/** Gives a console user (the identity provider's `sub`) a role on a workspace, for /waas/* console sessions. */
async function runGrant(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, subject: { type: 'string' }, role: { type: 'string' } }, strict: true });
  if (!values.tenant || !values.subject || !MEMBER_ROLES.includes(values.role as MemberRole)) {
    process.stderr.write(`admin grant needs --tenant, --subject and --role (${MEMBER_ROLES.join(', ')})\n`);
    return 2;
  }
  return withDatabase(async (sql) => {
    const workspace = await new TopologyRepo(sql).workspaceByPublicId(values.tenant!);
    if (!workspace) {
      process.stderr.write(`no workspace ${values.tenant}\n`);
      return 1;
    }
    await new MembershipRepo(sql).grant(workspace.id, values.subject!, values.role as MemberRole);
    process.stdout.write(`${values.subject} is ${values.role} of ${values.tenant}\n`);
    return 0;
  });
}

/**
 * `streamgate admin console-link`: prints a console sign-in URL for a role on
 * a workspace (operators, tests): single use, valid 10 minutes, only its hash
 * stored. The URL starts with console.publicUrl, else this machine's port.
 */
async function runConsoleLink(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, role: { type: 'string' } }, strict: true });
  if (!values.tenant || !MEMBER_ROLES.includes(values.role as MemberRole)) {
    process.stderr.write(`admin console-link needs --tenant and --role (${MEMBER_ROLES.join(', ')})\n`);
    return 2;
  }
  const config = loadConfig();
  return withDatabase(async (sql) => {
    const workspace = await new TopologyRepo(sql).workspaceByPublicId(values.tenant!);
    if (!workspace) {
      process.stderr.write(`no workspace ${values.tenant}\n`);
      return 1;
    }
    const link = await createLinkToken(new ConsoleSessionRepo(sql), workspace.id, values.role as MemberRole);
    process.stdout.write(`${linkUrl(config.console.publicUrl || `http://127.0.0.1:${config.server.port}`, link.token)}\n`);
    process.stderr.write(`One sign-in as ${values.role} of ${values.tenant}, until ${link.expiresAt.toISOString()}.\n`);
    return 0;
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError || (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`streamgate: ${(err as Error).message}\n`);
      process.exit(2);
    }
    // A dependency refused us at boot (login, certificate): the message already names it and the cause.
    if (err instanceof KafkaUnavailableError || err instanceof DependencyFailedError) {
      process.stderr.write(`streamgate: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`streamgate: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
