/**
 * What the console's session endpoints answer (POST and GET /console/api/session):
 * the schema the OpenAPI document shows (components.schemas ConsoleSession) and
 * the type the session answer is built as, so the document cannot drift from
 * the code (the OpenAPI test validates a real answer against it).
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
