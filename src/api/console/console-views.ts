/**
 * What the console's config and session endpoints answer (GET /console/api/config, POST and GET /console/api/session):
 * the schema the OpenAPI document shows (components.schemas ConsoleConfig, ConsoleSession) and
 * the types those answers are built as, so the document cannot drift from
 * the code (the OpenAPI test validates real answers against them).
 */
import Type from 'typebox';
import { nullable, oneOf } from '../../schema/schema-kit.js';

export const ConsoleSessionView = Type.Object(
  {
    kind: oneOf(['key', 'link', 'oidc'] as const),
    subject: Type.String({ description: 'the key id (key), link:<workspace>:<role> (link) or the identity provider\'s subject (oidc)' }),
    licensePublicId: nullable(Type.String({ pattern: '^lic_', description: 'null for an OpenID Connect session' })),
    workspaces: Type.Array(
      Type.Object(
        { tenantPublicId: Type.String({ pattern: '^ten_' }), name: Type.String(), role: oneOf(['Owner', 'Admin', 'Member'] as const) },
        { additionalProperties: false },
      ),
      { description: 'where the session may act, with which role' },
    ),
    expiresAt: Type.String({ format: 'date-time' }),
  },
  { title: 'ConsoleSession', additionalProperties: false },
);

/** What `GET /console/api/config` answers: what the sign-in page needs to know. */
export const ConsoleConfigView = Type.Object(
  {
    oidc: Type.Boolean({ description: 'whether OpenID Connect sign-in is configured' }),
    version: Type.String({ description: "the server's version (package.json)" }),
  },
  { title: 'ConsoleConfig', additionalProperties: false },
);
