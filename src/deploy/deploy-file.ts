import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * A deploy file: the desired configuration of one workspace, applied through
 * the HTTP API by `streamgate deploy`. Values may reference the environment as
 * ${NAME} (so keys and secrets stay out of the file).
 *
 *   apiUrl: http://127.0.0.1:8080
 *   licensePublicId: ${STREAMGATE_LICENSE}
 *   apiKey: ${STREAMGATE_API_KEY}
 *   tenant: ten_…
 *   queues:   { orders: { groupKeyRequired: true } }
 *   targets:  { mine: { url: http://…, staticHeaders: { X-Team: a } } }
 *   routes:   [ { queue: orders, target: mine } ]
 *   signingKeys: { minimum: 1, ed25519: 1 }
 *   streams:  [ { name: orders, description: …, eventTypes: [order.created], isPublic: true } ]
 */
export interface DeployFile {
  apiUrl: string;
  licensePublicId: string;
  apiKey: string;
  tenant: string;
  queues: Record<string, Record<string, unknown>>;
  targets: Record<string, Record<string, unknown>>;
  routes: Array<{ queue: string; target: string }>;
  /** At least `minimum` active HMAC keys and `ed25519` active ed25519 keys (v1a entries of standard queues). */
  signingKeys: { minimum: number; ed25519: number } | null;
  streams: Array<Record<string, unknown>>;
}

/** A problem in the file, named by its path (e.g. `targets.mine.url`). */
export class DeployFileError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.problems = problems;
  }
}

const TOP_LEVEL = ['apiUrl', 'licensePublicId', 'apiKey', 'tenant', 'queues', 'targets', 'routes', 'signingKeys', 'streams'];

export function readDeployFile(path: string, env: Record<string, string | undefined> = process.env): DeployFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new DeployFileError([`cannot read ${path}: ${(err as Error).message}`]);
  }
  const problems: string[] = [];
  const interpolated = text.replace(/\$\{([A-Z0-9_]+)\}/g, (_m, name: string) => {
    const value = env[name];
    if (value === undefined) problems.push(`\${${name}} is used but the environment does not set it`);
    return value ?? '';
  });
  let doc: unknown;
  try {
    doc = parse(interpolated);
  } catch (err) {
    throw new DeployFileError([`${path} is not valid YAML: ${(err as Error).message}`]);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new DeployFileError([`${path}: the top level must be a mapping`]);
  const d = doc as Record<string, unknown>;
  for (const key of Object.keys(d)) if (!TOP_LEVEL.includes(key)) problems.push(`${key}: unknown section (expected one of ${TOP_LEVEL.join(', ')})`);

  const str = (key: string, fallback?: string): string => {
    const v = d[key] ?? fallback;
    if (typeof v !== 'string' || v === '') problems.push(`${key}: required (a string)`);
    return typeof v === 'string' ? v : '';
  };
  const mapOfObjects = (key: string): Record<string, Record<string, unknown>> => {
    const v = d[key] ?? {};
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      problems.push(`${key}: must be a mapping of name to settings`);
      return {};
    }
    const out: Record<string, Record<string, unknown>> = {};
    for (const [name, settings] of Object.entries(v)) {
      if (settings === null) out[name] = {};
      else if (typeof settings !== 'object' || Array.isArray(settings)) problems.push(`${key}.${name}: must be a mapping`);
      else out[name] = settings as Record<string, unknown>;
    }
    return out;
  };

  const file: DeployFile = {
    apiUrl: str('apiUrl', env.STREAMGATE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    licensePublicId: str('licensePublicId', env.STREAMGATE_LICENSE),
    apiKey: str('apiKey', env.STREAMGATE_API_KEY),
    tenant: str('tenant', env.STREAMGATE_TENANT),
    queues: mapOfObjects('queues'),
    targets: mapOfObjects('targets'),
    routes: [],
    signingKeys: null,
    streams: [],
  };
  const routes = d.routes ?? [];
  if (!Array.isArray(routes)) problems.push('routes: must be a list of { queue, target }');
  else {
    routes.forEach((r: unknown, i) => {
      const route = r as Record<string, unknown>;
      if (typeof route?.queue !== 'string' || typeof route?.target !== 'string') problems.push(`routes[${i}]: needs queue and target names`);
      else file.routes.push({ queue: route.queue, target: route.target });
    });
  }
  if (d.signingKeys !== undefined) {
    const keys = (d.signingKeys ?? {}) as Record<string, unknown>;
    const count = (name: string, value: unknown): number | null => {
      if (value === undefined) return 0;
      if (Number.isInteger(value) && (value as number) >= 0) return value as number;
      problems.push(`signingKeys.${name}: must be a whole number`);
      return null;
    };
    for (const name of Object.keys(keys)) if (name !== 'minimum' && name !== 'ed25519') problems.push(`signingKeys.${name}: unknown setting (minimum, ed25519)`);
    const minimum = count('minimum', keys.minimum);
    const ed25519 = count('ed25519', keys.ed25519);
    if (minimum !== null && ed25519 !== null) file.signingKeys = { minimum, ed25519 };
  }
  const streams = d.streams ?? [];
  if (!Array.isArray(streams)) problems.push('streams: must be a list');
  else {
    streams.forEach((s: unknown, i) => {
      if (typeof s !== 'object' || s === null || typeof (s as Record<string, unknown>).name !== 'string') problems.push(`streams[${i}]: needs a name`);
      else file.streams.push(s as Record<string, unknown>);
    });
  }
  if (problems.length > 0) throw new DeployFileError(problems);
  return file;
}
