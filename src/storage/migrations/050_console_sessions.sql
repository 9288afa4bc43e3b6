-- Console sign-in (docs/console.md). Only SHA-256 hashes of the session ids and
-- one-time link tokens are stored: a copy of this table signs nobody in.

-- A signed-in browser. kind 'key': the API key it was exchanged for (its
-- profile and reach decide, and revoking the key ends the session); 'link': a
-- role on one workspace from a one-time link; 'oidc': the identity provider's
-- subject, whose memberships decide.
CREATE TABLE console_sessions (
  id            bigserial PRIMARY KEY,
  token_hash    bytea NOT NULL UNIQUE,
  kind          text NOT NULL CHECK (kind IN ('key', 'link', 'oidc')),
  subject       text NOT NULL,
  email         text,
  key_id        text REFERENCES api_keys(key_id),
  workspace_id  bigint REFERENCES workspaces(id),
  role          text CHECK (role IN ('Owner', 'Admin', 'Member')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz,
  CHECK ((kind = 'key') = (key_id IS NOT NULL)),
  CHECK ((kind = 'link') = (workspace_id IS NOT NULL AND role IS NOT NULL))
);
CREATE INDEX console_sessions_expires_idx ON console_sessions (expires_at);

-- A one-time sign-in link (`streamgate admin console-link`): single use, short-lived.
CREATE TABLE console_links (
  token_hash    bytea PRIMARY KEY,
  workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  role          text NOT NULL CHECK (role IN ('Owner', 'Admin', 'Member')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz
);
