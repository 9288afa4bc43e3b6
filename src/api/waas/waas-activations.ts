import type { Static } from 'typebox';
import { ServiceError } from '../../errors.js';
import type { Router } from '../../http/router.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed } from '../../schema/schema-kit.js';
import { checkBodyWithRules } from '../json-body.js';
import type { ActivationListView, ActivationView } from './waas-views.js';
import { GroupKeyString, groupKeyProblem, noContent, param, publicIdString, published, readBody, readQuery, writer, type WaasDeps } from './waas-context.js';

/** The body of `POST /waas/activations` and of `DELETE /waas/activations`: the (producer, group key, integration) triple. */
export const ActivationInput = closed(
  { producerTenantPublicId: publicIdString('tenant'), groupKey: GroupKeyString, integrationPublicId: publicIdString('integration') },
  { title: 'ActivationInput', description: 'The producer workspace, the group key and the integration whose routing gate opens (or closes) for events with that key.' },
);
const checkActivation = compileBody(ActivationInput);

/**
 * A valid activation body: the schema, then the group key's byte bound
 * (configured, ingress.keyMaxBytes: a longer key could never match an event).
 */
export function readActivation(body: unknown, keyMaxBytes: number): Static<typeof ActivationInput> {
  return checkBodyWithRules(body, checkActivation, (input, problems) => {
    // When other fields broke the schema, the rules see the body without them: a broken group key is absent here.
    if (input.groupKey === undefined) return input;
    const keyProblem = groupKeyProblem(input.groupKey, keyMaxBytes);
    if (keyProblem) problems.add('groupKey', keyProblem);
    return input;
  });
}

/**
 * Activations (docs/api.md): the (producer, groupKey, integration) triple
 * that opens the routing gate for events with that group key. POST is
 * idempotent (same publicId on every repeat, also after a revoke); DELETE is
 * idempotent and answers 204 whatever there was to revoke, never 404.
 */
export function registerWaasActivations(router: Router, deps: WaasDeps): void {
  const opts = { maxBodyBytes: deps.maxBodyBytes };

  const readTriple = (body: unknown) => {
    const input = readActivation(body, deps.keyMaxBytes);
    return { tenant: input.producerTenantPublicId, groupKey: input.groupKey, integration: input.integrationPublicId };
  };

  router.add('post', '/waas/activations', { ...opts, body: checkActivation }, async (ex) => {
    const caller = await writer(deps, ex);
    const triple = readTriple(await readBody(ex));
    const ws = await deps.auth.waasWorkspace(caller, triple.tenant, 'write');
    const integration = await deps.integrations.byPublicId(triple.integration);
    if (!integration || integration.producerWorkspaceId !== ws.id) throw new ServiceError('not_found', 'No such integration.');
    const { row, created, changed } = await deps.activations.activate(ws.id, triple.groupKey, integration.id);
    if (changed) await published(deps);
    const answer: Static<typeof ActivationView> = { publicId: row.publicId, groupKey: row.groupKey, status: row.status, integrationPublicId: integration.publicId };
    ex.sendJson(created ? 201 : 200, answer);
  });

  // Extension (the console lists them): the producer's activations, by group key.
  router.add('get', '/waas/producer/:tenant/activations', opts, async (ex) => {
    const ws = await deps.auth.waasWorkspace(await deps.auth.authenticateCaller(ex), param(ex, 0), 'read');
    const query = readQuery(ex, ['groupKey', 'integration'] as const);
    let integrationId: string | undefined;
    if (query.integration !== undefined) {
      const integration = await deps.integrations.byPublicId(query.integration);
      if (!integration || integration.producerWorkspaceId !== ws.id) throw new ServiceError('not_found', 'No such integration.');
      integrationId = integration.id;
    }
    const rows = await deps.activations.list(ws.id, { ...(query.groupKey !== undefined ? { groupKey: query.groupKey } : {}), ...(integrationId ? { integrationId } : {}) });
    const answer: Static<typeof ActivationListView> = { data: rows };
    ex.sendJson(200, answer);
  });

  router.add('del', '/waas/activations', { ...opts, body: checkActivation }, async (ex) => {
    const caller = await writer(deps, ex);
    const triple = readTriple(await readBody(ex));
    let ws;
    try {
      ws = await deps.auth.waasWorkspace(caller, triple.tenant, 'write');
    } catch (err) {
      // Nothing this caller could revoke there: the end state already holds.
      if (err instanceof ServiceError && err.code === 'not_found') return noContent(ex);
      throw err;
    }
    const integration = await deps.integrations.byPublicId(triple.integration);
    if (integration && integration.producerWorkspaceId === ws.id && (await deps.activations.revoke(ws.id, triple.groupKey, integration.id))) {
      await published(deps);
    }
    noContent(ex);
  });
}
