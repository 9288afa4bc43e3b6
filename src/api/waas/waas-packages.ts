import Type, { type Static } from 'typebox';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import type { Router } from '../../http/router.js';
import type { PackageRow } from '../../storage/waas-package-repo.js';
import type { WorkspaceRow } from '../../storage/topology-repo.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed, maybe, withProblem } from '../../schema/schema-kit.js';
import { checkBody } from '../json-body.js';
import { slugify } from './package-slug.js';
import type { PackageListView, PackageView } from './waas-views.js';
import { checkCatalogEntryRef, noContent, param, published, readBody, writer, type WaasDeps } from './waas-context.js';

/**
 * The body of `POST /waas/producer/{tenant}/packages` and of
 * `PUT /waas/producer/{tenant}/packages/{pkg}`: the name (its slug is the key
 * at creation) and a description; on PUT an absent description is kept and
 * null clears it.
 */
export const PackageInput = closed(
  {
    // \S: something left once trimmed (String.prototype.trim and \s agree on what is blank).
    name: withProblem(Type.String({ maxLength: 200, pattern: '\\S' }), 'must be a string of at most 200 characters, not blank'),
    description: maybe(Type.String({ maxLength: 4000, description: 'On PUT: absent keeps the current description, null clears it.' })),
  },
  { title: 'PackageInput', description: "A package's name (its slug becomes the key when the package is created) and description." },
);
const checkPackage = compileBody(PackageInput);

/**
 * Packages (docs/api.md#resources-and-states): named groups of a producer's streams. Access
 * is default-open, so a package changes nothing by itself; it is the lever of
 * package blocks. Created Active with a unique slug key; archived packages
 * refuse changes but their blocks stay in force (an opt-out never lifts by
 * itself).
 */
export function registerWaasPackages(router: Router, deps: WaasDeps): void {
  const opts = { maxBodyBytes: deps.maxBodyBytes };
  const base = '/waas/producer/:tenant/packages';

  const producer = async (ex: Exchange): Promise<WorkspaceRow> => deps.auth.waasWorkspace(await writer(deps, ex), param(ex, 0), 'write');
  const pkgOf = async (ws: WorkspaceRow, ex: Exchange): Promise<PackageRow> => {
    const pkg = await deps.packages.byPublicId(ws.id, param(ex, 1));
    if (!pkg) throw new ServiceError('not_found', 'No such package.');
    return pkg;
  };
  const activeOnly = (pkg: PackageRow) => {
    if (pkg.status !== 'Active') throw new ServiceError('conflict', 'The package is archived.');
  };

  router.add('post', base, { ...opts, body: checkPackage }, async (ex) => {
    const ws = await producer(ex);
    const { name, description } = readPackage(await readBody(ex));
    const pkg = await deps.packages.create(ws.id, slugify(name), name, description ?? null);
    ex.sendJson(201, packageJson(pkg));
  });

  router.add('get', base, opts, async (ex) => {
    const ws = await deps.auth.waasWorkspace(await deps.auth.authenticateCaller(ex), param(ex, 0), 'read');
    const answer: Static<typeof PackageListView> = { data: (await deps.packages.ofProducer(ws.id)).map(packageJson) };
    ex.sendJson(200, answer);
  });

  router.add('put', `${base}/:pkg`, { ...opts, body: checkPackage }, async (ex) => {
    const ws = await producer(ex);
    const { name, description } = readPackage(await readBody(ex));
    const pkg = await pkgOf(ws, ex);
    activeOnly(pkg);
    // An absent description keeps the current one; null clears it.
    const { row } = await deps.packages.update(pkg.id, name, description === undefined ? pkg.description : description);
    ex.sendJson(200, packageJson(row));
  });

  router.add('post', `${base}/:pkg/streams`, { ...opts, body: checkCatalogEntryRef }, async (ex) => {
    const ws = await producer(ex);
    const cat = checkBody(await readBody(ex), checkCatalogEntryRef).catalogEntryPublicId;
    const pkg = await pkgOf(ws, ex);
    activeOnly(pkg);
    const entry = await deps.catalog.entryByPublicId(ws.id, cat);
    if (!entry) throw new ServiceError('not_found', 'No such stream.');
    // Joining a package another block covers can pause subscriptions: invalidate.
    if (await deps.packages.addStream(pkg.id, entry.id)) await published(deps);
    noContent(ex);
  });

  router.add('del', `${base}/:pkg/streams/:catalogEntryPublicId`, opts, async (ex) => {
    const ws = await producer(ex);
    if (await deps.packages.removeStream(ws.id, param(ex, 1), param(ex, 2))) await published(deps);
    noContent(ex);
  });

  router.add('post', `${base}/:pkg/archive`, opts, async (ex) => {
    const ws = await producer(ex);
    const pkg = await pkgOf(ws, ex);
    if (await deps.packages.archive(pkg.id)) await published(deps);
    noContent(ex);
  });
}

/** A valid package body; `description` is undefined when absent, null when cleared. */
export function readPackage(body: unknown): Static<typeof PackageInput> {
  return checkBody(body, checkPackage);
}

function packageJson(p: PackageRow): Static<typeof PackageView> {
  return { publicId: p.publicId, key: p.key, name: p.name, description: p.description, status: p.status, streams: p.streams };
}
