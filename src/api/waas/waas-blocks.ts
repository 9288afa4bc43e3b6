import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import type { Router } from '../../http/router.js';
import type { IntegrationRow } from '../../storage/waas-integration-repo.js';
import type { WorkspaceRow } from '../../storage/topology-repo.js';
import { noContent, param, published, writer, type WaasDeps } from './waas-context.js';
import type { IntegrationBlocksView } from './waas-views.js';
import type { Static } from 'typebox';

/**
 * Blocks (docs/api.md#resources-and-states): one integration opted out of one stream or one
 * package. All four writes are idempotent and answer 204; un-blocks never 404.
 * The GET reads them back (an extension the console needs).
 * What a block does to subscriptions follows from src/routing/block-coverage.ts;
 * every change invalidates the routing gate before the answer, so events
 * accepted afterwards are routed on the new state.
 */
export function registerWaasBlocks(router: Router, deps: WaasDeps): void {
  const opts = { maxBodyBytes: deps.maxBodyBytes };
  const base = '/waas/producer/:tenant/integrations/:integration/blocks';

  const scope = async (ex: Exchange): Promise<WorkspaceRow> => deps.auth.waasWorkspace(await writer(deps, ex), param(ex, 0), 'write');
  const integrationOf = async (ws: WorkspaceRow, ex: Exchange): Promise<IntegrationRow> => {
    const integration = await deps.integrations.byPublicId(param(ex, 1));
    if (!integration || integration.producerWorkspaceId !== ws.id) throw new ServiceError('not_found', 'No such integration.');
    return integration;
  };

  // What is stored, and what it pauses now: the console shows both after a reload.
  router.add('get', base, opts, async (ex) => {
    const ws = await deps.auth.waasWorkspace(await deps.auth.authenticateCaller(ex), param(ex, 0), 'read');
    const integration = await integrationOf(ws, ex);
    const [stored, ledger, subscriptions] = await Promise.all([
      deps.blocks.ofIntegration(integration.id),
      deps.blocks.ledgerOfProducer(ws.id),
      deps.integrations.subscriptionsOf([integration.id]),
    ]);
    const answer: Static<typeof IntegrationBlocksView> = {
      streams: stored.streams.map((b) => ({ catalogEntryPublicId: b.catalogEntryPublicId, name: b.name, blockedAt: b.blockedAt.toISOString() })),
      packages: stored.packages.map((b) => ({ packagePublicId: b.packagePublicId, name: b.name, blockedAt: b.blockedAt.toISOString() })),
      pausedSubscriptions: subscriptions
        .filter((s) => ledger.status(integration.id, s.catalogEntryId) === 'paused')
        .map((s) => ({ publicId: s.publicId, catalogEntryPublicId: s.catalogEntryPublicId, status: 'paused' })),
    };
    ex.sendJson(200, answer);
  });

  router.add('post', `${base}/streams/:catalogEntryPublicId`, opts, async (ex) => {
    const ws = await scope(ex);
    const integration = await integrationOf(ws, ex);
    const entry = await deps.catalog.entryByPublicId(ws.id, param(ex, 2));
    if (!entry) throw new ServiceError('not_found', 'No such stream.');
    if (await deps.blocks.blockStream(integration.id, entry.id)) await published(deps);
    noContent(ex);
  });

  router.add('del', `${base}/streams/:catalogEntryPublicId`, opts, async (ex) => {
    const ws = await scope(ex);
    if (await deps.blocks.unblockStream(ws.id, param(ex, 1), param(ex, 2))) await published(deps);
    noContent(ex);
  });

  router.add('post', `${base}/packages/:pkg`, opts, async (ex) => {
    const ws = await scope(ex);
    const integration = await integrationOf(ws, ex);
    const pkg = await deps.packages.byPublicId(ws.id, param(ex, 2));
    if (!pkg) throw new ServiceError('not_found', 'No such package.');
    if (await deps.blocks.blockPackage(integration.id, pkg.id)) await published(deps);
    noContent(ex);
  });

  router.add('del', `${base}/packages/:pkg`, opts, async (ex) => {
    const ws = await scope(ex);
    if (await deps.blocks.unblockPackage(ws.id, param(ex, 1), param(ex, 2))) await published(deps);
    noContent(ex);
  });
}
