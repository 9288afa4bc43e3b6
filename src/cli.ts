#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/load-config.js';
import { ROLES, type Role } from './config/schema.js';
import { createLogger } from './observability/logger.js';
import { connectDatabase } from './storage/db.js';
import { migrate } from './storage/migrate.js';
import { bootstrap } from './management/bootstrap.js';
import { startNode } from './node.js';
import { TopologyRepo } from './storage/topology-repo.js';
import { MEMBER_ROLES, MembershipRepo, type MemberRole } from './storage/membership-repo.js';

const USAGE = `usage:
  streamgate start [--roles ingress,delivery,management]
  streamgate migrate
  streamgate admin bootstrap --email EMAIL [--json]
  streamgate admin grant --tenant ten_... --subject SUB --role Owner|Admin|Member`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(rest);
    case 'migrate':
      return runMigrate();
    case 'admin':
      if (rest[0] === 'bootstrap') return runBootstrap(rest.slice(1));
      if (rest[0] === 'grant') return runGrant(rest.slice(1));
      break;
  }
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

async function start(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { roles: { type: 'string' } }, strict: true });
  const overrides: Record<string, unknown> = {};
  if (values.roles) {
    const roles = values.roles.split(',').map((r) => r.trim()).filter(Boolean);
    const bad = roles.filter((r) => !ROLES.includes(r as Role));
    if (bad.length > 0 || roles.length === 0) throw new ConfigError([`--roles: unknown role(s) ${bad.join(', ')}; use ${ROLES.join(', ')}`]);
    overrides.roles = roles;
  }
  const config = loadConfig(process.env, overrides);
  const log = createLogger(config.log.level);
  const node = await startNode(config, log);
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      log.info({ signal }, 'draining');
      node.stop().then(resolve, (err: unknown) => {
        log.error({ err }, 'error while stopping');
        resolve();
      });
    };
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));
  });
  return 0;
}

async function runMigrate(): Promise<number> {
  const config = loadConfig();
  const sql = connectDatabase(config.database.url, 1);
  try {
    const applied = await migrate(sql);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function runBootstrap(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, json: { type: 'boolean' } }, strict: true });
  if (!values.email || !/^[^\s@]+@[^\s@]+$/.test(values.email)) {
    process.stderr.write('admin bootstrap needs --email with an e-mail address\n');
    return 2;
  }
  const config = loadConfig();
  const sql = connectDatabase(config.database.url, 2);
  try {
    await migrate(sql);
    const result = await bootstrap(sql, values.email);
    if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      process.stdout.write(
        `license:     ${result.licensePublicId}\nworkspace:   ${result.tenantPublicId}\n` +
          `build key:   ${result.buildKey}\ningress key: ${result.ingressKey}\n` +
          'The keys are shown once; store them now.\n',
      );
    }
    return 0;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Gives a console user (the identity provider's `sub`) a role on a workspace, for /waas/* console sessions. */
async function runGrant(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, subject: { type: 'string' }, role: { type: 'string' } }, strict: true });
  if (!values.tenant || !values.subject || !MEMBER_ROLES.includes(values.role as MemberRole)) {
    process.stderr.write(`admin grant needs --tenant, --subject and --role (${MEMBER_ROLES.join(', ')})\n`);
    return 2;
  }
  const config = loadConfig();
  const sql = connectDatabase(config.database.url, 2);
  try {
    await migrate(sql);
    const workspace = await new TopologyRepo(sql).workspaceByPublicId(values.tenant);
    if (!workspace) {
      process.stderr.write(`no workspace ${values.tenant}\n`);
      return 1;
    }
    await new MembershipRepo(sql).grant(workspace.id, values.subject, values.role as MemberRole);
    process.stdout.write(`${values.subject} is ${values.role} of ${values.tenant}\n`);
    return 0;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError || (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`streamgate: ${(err as Error).message}\n`);
      process.exit(2);
    }
    process.stderr.write(`streamgate: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
