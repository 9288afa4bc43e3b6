import Type from 'typebox';
import type { CacheStore } from '../../cache/cache-store.js';
import type { Caller, ManagementAuth } from '../../auth/management-auth.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import { ServiceError, type FieldProblem } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import type { TopologyRepo } from '../../storage/topology-repo.js';
import type { WaasActivationRepo } from '../../storage/waas-activation-repo.js';
import type { WaasBlockRepo } from '../../storage/waas-block-repo.js';
import type { WaasCatalogRepo } from '../../storage/waas-catalog-repo.js';
import type { WaasIntegrationRepo } from '../../storage/waas-integration-repo.js';
import type { WaasPackageRepo } from '../../storage/waas-package-repo.js';
import { readJsonObject } from '../json-body.js';
import { decodePathSegment } from '../../http/path-segment.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed, withProblem } from '../../schema/schema-kit.js';

/** What the /waas/* handlers share. */
export interface WaasDeps {
  auth: ManagementAuth;
  topology: TopologyRepo;
  catalog: WaasCatalogRepo;
  integrations: WaasIntegrationRepo;
  activations: WaasActivationRepo;
  packages: WaasPackageRepo;
  blocks: WaasBlockRepo;
  bus: InvalidationBus;
  cache: CacheStore;
  maxBodyBytes: number;
  /** Longest group key (bytes), the same limit ingress applies. */
  keyMaxBytes: number;
}

/** Public ids in paths and bodies: the prefix and the shape newId() makes. */
export const PUBLIC_ID = {
  tenant: /^ten_[A-Za-z0-9_-]{8,64}$/,
  license: /^lic_[A-Za-z0-9_-]{8,64}$/,
  catalog: /^cat_[A-Za-z0-9_-]{8,64}$/,
  integration: /^int_[A-Za-z0-9_-]{8,64}$/,
} as const;

/** A stream's name is its queue's name, so it follows the queue naming rule of the /v1 API. */
export const STREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const ID_WORDS = { tenant: 'workspace (ten_…)', license: 'license (lic_…)', catalog: 'catalog entry (cat_…)', integration: 'integration (int_…)' } as const;

/** A public id of one kind in a body, as a schema: PUBLIC_ID's shape ("has an invalid format" otherwise). */
export function publicIdString(kind: keyof typeof PUBLIC_ID) {
  return Type.String({ pattern: PUBLIC_ID[kind].source, description: `The public id of a ${ID_WORDS[kind]}.` });
}

/**
 * The body of `POST /waas/integrations/{int}/subscriptions` and of
 * `POST /waas/producer/{tenant}/packages/{pkg}/streams`: the stream (catalog entry) meant.
 */
export const CatalogEntryRefInput = closed(
  { catalogEntryPublicId: publicIdString('catalog') },
  { title: 'CatalogEntryRefInput', description: 'A stream of the producer, by its catalog entry id.' },
);
export const checkCatalogEntryRef = compileBody(CatalogEntryRefInput);

/**
 * Tells every node that producer configuration changed. Awaited before the
 * response: the config version is bumped by then, so any event accepted after
 * the answer is routed on the new state (RouteTable.sync()).
 */
export async function published(deps: WaasDeps): Promise<void> {
  await deps.bus.publish('waas');
}

/** A decoded path parameter; one that cannot be decoded (or holds NUL) names nothing that exists. */
export function param(ex: Exchange, index: number): string {
  return decodePathSegment(ex.params[index]!);
}

/**
 * The JSON object body of a /waas request. Strings holding NUL are refused
 * here, for every field at once: Postgres text cannot store NUL, and such a
 * value must be a 400 naming the field, not a failed query. The handler then
 * checks the body against its schema (checkBody), this check first.
 */
export async function readBody(ex: Exchange): Promise<Record<string, unknown>> {
  const body = await readJsonObject(ex);
  const problems: FieldProblem[] = [];
  const walk = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      if (value.includes('\u0000')) problems.push({ field: path, problem: 'must not contain NUL characters' });
    } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`));
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
  };
  walk(body, '');
  if (problems.length > 0) throw new ServiceError('validation_failed', 'The request is not valid: strings must not contain NUL characters.', problems);
  return body;
}

/**
 * The caller of a write. A key without Connect permissions is refused here,
 * before anything is looked up (403 missing_permission says nothing about
 * what exists); console roles are checked per workspace later.
 */
export async function writer(deps: WaasDeps, ex: Exchange): Promise<Caller> {
  const caller = await deps.auth.authenticateCaller(ex);
  if (caller.kind === 'key') deps.auth.require(caller, 'connect');
  return caller;
}

// The characters ingress refuses in a group key (C0, DEL, C1): such a key could never match an event.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** No C0, DEL or C1 control character (one or more characters). */
const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f-\\u009f]+$';

/**
 * A group key in a body, as far as a schema can say: a non-empty string
 * without control characters. Its length is in bytes and configured
 * (ingress.keyMaxBytes), so groupKeyProblem() checks it after the schema.
 */
export const GroupKeyString = withProblem(
  Type.String({ minLength: 1, pattern: NO_CONTROL, description: 'A group key: not empty, no control characters, at most ingress.keyMaxBytes bytes of UTF-8 (255 by default).' }),
  'must be a non-empty string without control characters',
);

/**
 * Why a group key breaks the limits ingress applies to the one events carry
 * (not empty, at most `maxBytes` bytes of UTF-8, no control characters), or
 * null when it can match an event. For a string the schema has checked, only
 * the byte bound is left to find.
 */
export function groupKeyProblem(value: string, maxBytes: number): string | null {
  if (value === '') return 'must not be empty';
  if (CONTROL.test(value) || Buffer.byteLength(value) > maxBytes) return `must be at most ${maxBytes} bytes without control characters`;
  return null;
}

/**
 * The query parameters of a /waas read: each at most once, none but `allowed`.
 * Anything else is a 400 naming each offending parameter, not a silently
 * wider answer.
 */
export function readQuery<K extends string>(ex: Exchange, allowed: readonly K[]): Partial<Record<K, string>> {
  const query = new URLSearchParams(ex.query);
  const problems: FieldProblem[] = [];
  const out: Partial<Record<K, string>> = {};
  for (const name of new Set(query.keys())) {
    const values = query.getAll(name);
    if (!(allowed as readonly string[]).includes(name)) problems.push({ field: name, problem: 'is not a parameter of this request' });
    else if (values.length !== 1) problems.push({ field: name, problem: 'must be given at most once' });
    else if (values[0]!.includes('\u0000')) problems.push({ field: name, problem: 'must not contain NUL characters' });
    else out[name as K] = values[0]!;
  }
  if (problems.length > 0) throw new ServiceError('validation_failed', `The query is not valid: ${problems.map((p) => `${p.field} ${p.problem}`).join('; ')}.`, problems);
  return out;
}

export function noContent(ex: Exchange): void {
  ex.send(204, '');
}
