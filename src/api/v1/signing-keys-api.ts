import type { ManagementAuth } from '../../auth/management-auth.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { Router } from '../../http/router.js';
import type { SigningKeyRepo } from '../../storage/signing-key-repo.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed } from '../../schema/schema-kit.js';
import { readBody } from '../json-body.js';
import { standardSecret } from '../../delivery/signing/signing.js';
import { decodePathSegment } from '../../http/path-segment.js';

export interface SigningKeysApiDeps {
  auth: ManagementAuth;
  signingKeys: SigningKeyRepo;
  bus: InvalidationBus;
  maxBodyBytes: number;
}

/** The body of `POST /v1/tenants/{tenant}/signing-keys`: no fields yet (empty, or {}). */
export const SigningKeyInput = closed({}, { title: 'SigningKeyInput', description: 'No fields yet: send nothing, or {}.' });
const checkSigningKeyInput = compileBody(SigningKeyInput);

/**
 * `POST /v1/tenants/{tenant}/signing-keys` (docs/api.md#configuration-api): creates an HMAC
 * signing key of the workspace and returns `{ keyId, secret }`, the secret
 * shown this once. Any active key verifies signed-request ingress; the newest
 * signs outbound deliveries of `hmac` queues. The write is published on the
 * invalidation bus before the answer, so every ingress node accepts the key
 * (and a queue paused for lack of a key resumes) as soon as the caller has it.
 */
export function registerSigningKeysApi(router: Router, deps: SigningKeysApiDeps): void {
  router.add('post', '/v1/tenants/:tenant/signing-keys', { maxBodyBytes: deps.maxBodyBytes, body: checkSigningKeyInput }, async (ex) => {
    const { ws } = await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    // No fields yet; an empty body or {} is the request, anything else is named.
    await readBody(ex, checkSigningKeyInput);
    const key = await deps.signingKeys.create(ws.id);
    await deps.bus.publish('signing-key');
    // standardSecret: the same key as Standard Webhooks libraries take it (`new Webhook(standardSecret)`).
    ex.sendJson(201, { keyId: key.keyId, secret: key.secret, standardSecret: standardSecret(key.secret), tenantPublicId: ws.publicId, createdAt: key.createdAt.toISOString() });
  });
  // The active keys, newest first (the first signs outbound deliveries); secrets are never listed.
  router.add('get', '/v1/tenants/:tenant/signing-keys', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const keys = await deps.signingKeys.active(ws.id);
    ex.sendJson(200, { data: keys.map((k) => ({ keyId: k.keyId, createdAt: k.createdAt.toISOString() })) });
  });
  // Revokes a signing key: ingress stops accepting signatures made with it on every node (invalidation
  // bus); with no active key left, the workspace's signed-request queues answer queue_paused.
  // Idempotent: again, unknown or another workspace's id → 204 all the same, nothing changes.
  router.add('del', '/v1/tenants/:tenant/signing-keys/:keyId', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    if (await deps.signingKeys.revoke(ws.id, decodePathSegment(ex.params[1]!))) await deps.bus.publish('signing-key');
    ex.send(204, '');
  });
}

