import { createHash, timingSafeEqual } from 'node:crypto';
import Type, { type Static } from 'typebox';
import type { Caller } from '../../auth/management-auth.js';
import { ServiceError } from '../../errors.js';
import type { Router } from '../../http/router.js';
import { randomBytesPooled } from '../../ids.js';
import type { AcceptInto, IntegrationRow, SubscriptionRow } from '../../storage/waas-integration-repo.js';
import type { BlockLedger } from '../../routing/block-coverage.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed, maybe } from '../../schema/schema-kit.js';
import { checkBody } from '../json-body.js';
import type { IntegrationAcceptedView, IntegrationListView, IntegrationView, InvitationView, ReceivedIntegrationListView } from './waas-views.js';
import { param, publicIdString, published, readBody, readQuery, writer, type WaasDeps } from './waas-context.js';

const EMAIL = /^[^\s@<>",;]{1,64}@[^\s@<>",;]+\.[^\s@<>",;]+$/;

/** The body of `POST /waas/integrations`: the producer and the partner's e-mail address to invite. */
export const IntegrationInviteInput = closed(
  {
    producerTenantPublicId: publicIdString('tenant'),
    email: Type.String({ maxLength: 254, pattern: EMAIL.source, description: 'The address the invitation is for.' }),
  },
  { title: 'IntegrationInviteInput', description: 'The producer workspace and the e-mail address of the partner to invite.' },
);
const checkInvite = compileBody(IntegrationInviteInput);

/**
 * The body of `POST /waas/integrations/{int}/accept`: the invite token, and
 * for an existing account the license and/or the receiving workspace (neither:
 * a new free account).
 */
export const IntegrationAcceptInput = closed(
  {
    inviteToken: Type.String({ maxLength: 200, description: 'The token the invitation answer showed once.' }),
    licensePublicId: maybe(publicIdString('license')),
    receivingTenantPublicId: maybe(publicIdString('tenant')),
  },
  {
    title: 'IntegrationAcceptInput',
    description: 'The invite token; licensePublicId and/or receivingTenantPublicId accept onto an account the caller administers (neither: a new free account).',
  },
);
const checkAccept = compileBody(IntegrationAcceptInput);

/**
 * Integrations (docs/api.md): the producer invites a partner by
 * e-mail and hands over the invite token; the partner accepts onto an account
 * it owns or administers, or onto a new free account. Only a hash of the
 * token is kept; it is compared in constant time.
 */
export function registerWaasIntegrations(router: Router, deps: WaasDeps): void {
  const opts = { maxBodyBytes: deps.maxBodyBytes };

  router.add('post', '/waas/integrations', { ...opts, body: checkInvite }, async (ex) => {
    const caller = await writer(deps, ex);
    const { producerTenantPublicId: tenant, email } = checkBody(await readBody(ex), checkInvite);
    const ws = await deps.auth.waasWorkspace(caller, tenant, 'write');
    const token = `qit_${randomBytesPooled(32).toString('base64url')}`;
    // Nothing routes through a Pending integration: no invalidation needed.
    const { row, created } = await deps.integrations.invite(ws.id, email, hashToken(token));
    // invite() answers the Pending row it made or re-issued (an accepted one is never touched).
    const answer: Static<typeof InvitationView> = { publicId: row.publicId, invitedEmail: row.invitedEmail, status: 'Pending', inviteToken: token };
    ex.sendJson(created ? 201 : 200, answer);
  });

  router.add('get', '/waas/producer/:tenant/integrations', opts, async (ex) => {
    const caller = await deps.auth.authenticateCaller(ex);
    const ws = await deps.auth.waasWorkspace(caller, param(ex, 0), 'read');
    const [rows, ledger] = await Promise.all([deps.integrations.ofProducer(ws.id), deps.blocks.ledgerOfProducer(ws.id)]);
    const subscriptions = await deps.integrations.subscriptionsOf(rows.map((i) => i.id));
    const answer: Static<typeof IntegrationListView> = { data: rows.map((i) => integrationJson(i, subscriptions, ledger)) };
    ex.sendJson(200, answer);
  });

  // Extension: the receiving side's list, so a partner needs no ids to find its integrations.
  router.add('get', '/waas/integrations', opts, async (ex) => {
    const caller = await deps.auth.authenticateCaller(ex);
    const query = readQuery(ex, ['licensePublicId', 'receivingTenantPublicId'] as const);
    const lic = query.licensePublicId;
    const tenant = query.receivingTenantPublicId;
    if (lic === undefined && tenant === undefined) {
      throw new ServiceError('validation_failed', 'Name the license (licensePublicId) or the receiving workspace (receivingTenantPublicId).', [
        { field: 'licensePublicId', problem: 'is required without receivingTenantPublicId' },
      ]);
    }
    let licenseId: string;
    let workspaceIds: string[] | null;
    if (lic !== undefined) {
      ({ licenseId, workspaceIds } = await deps.auth.licenseScopeOf(caller, lic));
      if (tenant !== undefined) {
        const ws = await deps.topology.workspaceByPublicId(tenant);
        if (!ws || ws.licenseId !== licenseId || (workspaceIds !== null && !workspaceIds.includes(ws.id))) throw new ServiceError('not_found', 'No such workspace in that license.');
        workspaceIds = [ws.id];
      }
    } else {
      const ws = await deps.auth.waasWorkspace(caller, tenant!, 'read');
      licenseId = ws.licenseId;
      workspaceIds = [ws.id];
    }
    const rows = await deps.integrations.receivedInLicense(licenseId, workspaceIds);
    const subscriptions = await deps.integrations.subscriptionsOf(rows.map((i) => i.id));
    // receivedInLicense() answers Active integrations only, each with its receiving workspace.
    const answer: Static<typeof ReceivedIntegrationListView> = {
      data: rows.map((i) => ({
        integrationPublicId: i.publicId,
        producerTenantPublicId: i.producerTenantPublicId,
        receivingTenantPublicId: i.receivingTenantPublicId!,
        status: 'Active',
        subscriptions: subscriptions.filter((s) => s.integrationId === i.id).length,
      })),
    };
    ex.sendJson(200, answer);
  });

  router.add('post', '/waas/integrations/:integration/accept', { ...opts, body: checkAccept }, async (ex) => {
    const input = checkBody(await readBody(ex), checkAccept);
    const token = input.inviteToken;
    // null is "not given".
    const licensePublicId = input.licensePublicId ?? undefined;
    const receivingTenant = input.receivingTenantPublicId ?? undefined;
    const integration = await deps.integrations.byPublicId(param(ex, 0));
    // A wrong token and an unknown integration look the same: no existence leaks.
    if (!integration || !tokenMatches(token, integration.inviteTokenHash)) throw new ServiceError('not_found', 'No such invitation.');
    if (integration.status !== 'Pending') throw new ServiceError('conflict', 'This invitation has already been accepted.');

    const onto = licensePublicId !== undefined || receivingTenant !== undefined;
    const caller = onto || deps.auth.hasCredentials(ex) ? await deps.auth.authenticateCaller(ex) : null;
    const into = onto ? await existingAccount(deps, caller!, licensePublicId, receivingTenant, integration) : { kind: 'new-account' as const, email: integration.invitedEmail };
    const accepted = await deps.integrations.accept(integration.id, into, caller?.kind === 'console' ? caller.subject : null);
    if (!accepted) throw new ServiceError('conflict', 'This invitation has already been accepted.');
    await published(deps);
    const answer: Static<typeof IntegrationAcceptedView> = {
      integrationPublicId: integration.publicId,
      status: 'Active',
      receivingTenantPublicId: accepted.receivingTenantPublicId,
      licensePublicId: accepted.licensePublicId,
      ...(accepted.buildKey ? { buildKey: accepted.buildKey } : {}),
    };
    ex.sendJson(200, answer);
  });
}

/**
 * Where an invitation accepted onto an existing account lands: the workspace
 * the caller names (extension: `receivingTenantPublicId`), else the workspace
 * a workspace-scoped key is bound to, else a new workspace in the license.
 * A license or workspace the caller does not administer is 404.
 */
async function existingAccount(
  deps: WaasDeps,
  caller: Caller,
  licensePublicId: string | undefined,
  receivingTenant: string | undefined,
  integration: IntegrationRow,
): Promise<AcceptInto> {
  if (receivingTenant !== undefined) {
    const ws = await deps.auth.waasWorkspace(caller, receivingTenant, 'write');
    if (licensePublicId !== undefined && ws.licensePublicId !== licensePublicId) throw new ServiceError('not_found', 'No such workspace in that license.');
    if (ws.id === integration.producerWorkspaceId) throw new ServiceError('conflict', 'An integration cannot receive into its own producer workspace.');
    return { kind: 'workspace', workspaceId: ws.id };
  }
  const licenseId = await deps.integrations.licenseIdByPublicId(licensePublicId!);
  if (licenseId === null || !(await deps.auth.administersLicense(caller, licensePublicId!, licenseId))) {
    throw new ServiceError('not_found', 'No such license.');
  }
  if (caller.kind === 'key' && caller.workspaceId !== null) {
    if (caller.workspaceId === integration.producerWorkspaceId) throw new ServiceError('conflict', 'An integration cannot receive into its own producer workspace.');
    return { kind: 'workspace', workspaceId: caller.workspaceId };
  }
  return { kind: 'new-workspace', licenseId };
}

/** An integration as its producer lists it, with the status of each of its subscriptions. */
function integrationJson(i: IntegrationRow, subscriptions: SubscriptionRow[], ledger: BlockLedger): Static<typeof IntegrationView> {
  return {
    publicId: i.publicId,
    invitedEmail: i.invitedEmail,
    status: i.status,
    receivingTenantPublicId: i.receivingTenantPublicId,
    subscriptions: subscriptions
      .filter((s) => s.integrationId === i.id)
      .map((s) => ({ catalogEntryPublicId: s.catalogEntryPublicId, status: ledger.status(i.id, s.catalogEntryId) })),
  };
}

function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function tokenMatches(token: string, storedHash: Buffer): boolean {
  const presented = hashToken(token);
  return presented.length === storedHash.length && timingSafeEqual(presented, storedHash);
}
