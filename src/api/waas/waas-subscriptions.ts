import type { Static } from 'typebox';
import type { Access, Caller } from '../../auth/management-auth.js';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import type { Router } from '../../http/router.js';
import type { IntegrationRow, SubscriptionRow } from '../../storage/waas-integration-repo.js';
import type { BlockLedger } from '../../routing/block-coverage.js';
import { checkBody } from '../json-body.js';
import type { SubscriptionListView, SubscriptionView } from './waas-views.js';
import { checkCatalogEntryRef, noContent, param, published, readBody, writer, type WaasDeps } from './waas-context.js';

/**
 * Subscriptions, from the partner's side (docs/api.md#producer-api-waas). Subscribing creates a
 * queue named after the stream in the receiving workspace; the partner routes
 * it to its own targets with the /v1 configuration API, and events of the
 * stream reach the partner only through it. Status is live or paused,
 * computed from the producer's blocks.
 */
export function registerWaasSubscriptions(router: Router, deps: WaasDeps): void {
  const opts = { maxBodyBytes: deps.maxBodyBytes };
  const base = '/waas/integrations/:integration/subscriptions';

  router.add('post', base, { ...opts, body: checkCatalogEntryRef }, async (ex) => {
    const caller = await writer(deps, ex);
    const cat = checkBody(await readBody(ex), checkCatalogEntryRef).catalogEntryPublicId;
    const integration = await partnerIntegration(deps, ex, caller, 'write');
    const entry = await deps.catalog.entryByPublicId(integration.producerWorkspaceId, cat);
    // Partners see Published streams only (docs/api.md#producer-api-waas); anything else does not exist for them.
    if (!entry || entry.status !== 'Published') throw new ServiceError('not_found', 'No such published stream.');
    const result = await deps.integrations.subscribe(integration.id, integration.receivingWorkspaceId!, entry);
    if ('conflict' in result) throw new ServiceError('conflict', result.conflict);
    if (result.changed) await published(deps);
    const ledger = await deps.blocks.ledgerOfProducer(integration.producerWorkspaceId);
    ex.sendJson(result.created ? 201 : 200, subscriptionJson(result.row, ledger));
  });

  router.add('get', base, opts, async (ex) => {
    const integration = await partnerIntegration(deps, ex, await deps.auth.authenticateCaller(ex), 'read');
    const [rows, ledger] = await Promise.all([
      deps.integrations.subscriptionsOf([integration.id]),
      deps.blocks.ledgerOfProducer(integration.producerWorkspaceId),
    ]);
    const answer: Static<typeof SubscriptionListView> = { data: rows.map((s) => subscriptionJson(s, ledger)) };
    ex.sendJson(200, answer);
  });

  router.add('del', `${base}/:subscription`, opts, async (ex) => {
    const integration = await partnerIntegration(deps, ex, await writer(deps, ex), 'write');
    if (await deps.integrations.unsubscribe(integration.id, param(ex, 1))) await published(deps);
    noContent(ex);
  });
}

/** The accepted integration named in the path, if the caller reaches its receiving workspace; 404 otherwise. */
async function partnerIntegration(deps: WaasDeps, ex: Exchange, caller: Caller, access: Access): Promise<IntegrationRow> {
  const integration = await deps.integrations.byPublicId(param(ex, 0));
  const receiving = integration?.receivingTenantPublicId ? await deps.topology.workspaceByPublicId(integration.receivingTenantPublicId) : null;
  if (!integration || !receiving || !(await deps.auth.reaches(caller, receiving, access))) {
    throw new ServiceError('not_found', 'No such integration.');
  }
  return integration;
}

function subscriptionJson(s: SubscriptionRow, ledger: BlockLedger): Static<typeof SubscriptionView> {
  return {
    publicId: s.publicId,
    catalogEntryPublicId: s.catalogEntryPublicId,
    status: ledger.status(s.integrationId, s.catalogEntryId),
    receivingQueue: s.receivingQueueName,
  };
}
