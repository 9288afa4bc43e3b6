import type { ManagementAuth } from '../../auth/management-auth.js';
import type { InvalidationBus } from '../../cache/invalidation-bus.js';
import type { Router } from '../../http/router.js';
import type { SigningKeyRepo } from '../../storage/signing-key-repo.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed, maybe, oneOf } from '../../schema/schema-kit.js';
import { ServiceError } from '../../errors.js';
import type { KeyEncryption } from '../../storage/key-encryption.js';
import { SIGNING_ALGORITHMS } from '../../storage/signing-key-repo.js';
import { readBody } from '../json-body.js';
import { standardSecret } from '../../delivery/signing/signing.js';
import { decodePathSegment } from '../../http/path-segment.js';
import type { Static } from 'typebox';
import type { SigningKeyCreatedView, SigningKeyListView } from './resource-views.js';

export interface SigningKeysApiDeps {
  auth: ManagementAuth;
  signingKeys: SigningKeyRepo;
  bus: InvalidationBus;
  maxBodyBytes: number;
  /** signing.keyEncryptionKey; null when unset: ed25519 keys are refused (409 conflict). */
  keyEncryption: KeyEncryption | null;
}

/** The body of `POST /v1/tenants/{tenant}/signing-keys`: the algorithm (empty body or {}: hmac-sha256). */
export const SigningKeyInput = closed(
  {
    // hmac-sha256 (default): a shared secret, for every signature; ed25519: a key pair, for v1a entries of `standard` deliveries only.
    algorithm: maybe(oneOf(SIGNING_ALGORITHMS)),
  },
  { title: 'SigningKeyInput', description: 'Send nothing or {} for an HMAC key; {"algorithm":"ed25519"} for an ed25519 key pair.' },
);
const checkSigningKeyInput = compileBody(SigningKeyInput);

/**
 * `POST /v1/tenants/{tenant}/signing-keys` (docs/api.md#signing-keys): creates an HMAC
 * signing key of the workspace and returns `{ keyId, algorithm, secret, standardSecret }`,
 * the secret shown this once. Any active HMAC key verifies signed-request ingress; the newest
 * signs outbound deliveries of `hmac` queues. With `algorithm: ed25519` it makes a key pair
 * and returns `{ keyId, algorithm, publicKey }` (never the private key, kept encrypted): it
 * adds a `v1a` entry to the deliveries of `standard` queues and nothing else. The write is published on the
 * invalidation bus before the answer, so every ingress node accepts the key
 * (and a queue paused for lack of a key resumes) as soon as the caller has it.
 */
export function registerSigningKeysApi(router: Router, deps: SigningKeysApiDeps): void {
  router.add('post', '/v1/tenants/:tenant/signing-keys', { maxBodyBytes: deps.maxBodyBytes, body: checkSigningKeyInput }, async (ex) => {
    const { ws } = await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    // An empty body or {} is an HMAC key; an unknown field or algorithm is named.
    const input = await readBody(ex, checkSigningKeyInput);
    if (input.algorithm === 'ed25519') {
      if (!deps.keyEncryption) {
        throw new ServiceError(
          'conflict',
          'ed25519 signing keys are not enabled on this deployment: its operator sets signing.keyEncryptionKey (env STREAMGATE_KEY_ENCRYPTION_KEY), the key their private halves are encrypted with (docs/operations.md#signing-key-encryption).',
        );
      }
      const made = await deps.signingKeys.createEd25519(ws.id, deps.keyEncryption);
      await deps.bus.publish('signing-key');
      const answer: Static<typeof SigningKeyCreatedView> = { keyId: made.keyId, algorithm: 'ed25519', publicKey: made.publicKey, tenantPublicId: ws.publicId, createdAt: made.createdAt.toISOString() };
      ex.sendJson(201, answer);
      return;
    }
    const key = await deps.signingKeys.create(ws.id);
    await deps.bus.publish('signing-key');
    // standardSecret: the same key as Standard Webhooks libraries take it (`new Webhook(standardSecret)`).
    const answer: Static<typeof SigningKeyCreatedView> = {
      keyId: key.keyId,
      algorithm: 'hmac-sha256',
      secret: key.secret,
      standardSecret: standardSecret(key.secret),
      tenantPublicId: ws.publicId,
      createdAt: key.createdAt.toISOString(),
    };
    ex.sendJson(201, answer);
  });
  // The active keys of both algorithms, newest first; secrets and private keys are never listed.
  router.add('get', '/v1/tenants/:tenant/signing-keys', { maxBodyBytes: 0 }, async (ex) => {
    const { ws } = await deps.auth.configWorkspace(ex, decodePathSegment(ex.params[0]!, 'No such workspace.'));
    const keys = await deps.signingKeys.listActive(ws.id);
    const answer: Static<typeof SigningKeyListView> = {
      data: keys.map((k) => ({ keyId: k.keyId, algorithm: k.algorithm, ...(k.publicKey ? { publicKey: k.publicKey } : {}), createdAt: k.createdAt.toISOString() })),
    };
    ex.sendJson(200, answer);
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

