-- HMAC signing keys of a workspace: any active key verifies signed-request
-- ingress; the newest signs outbound deliveries of `hmac` queues. Unlike API
-- keys the secret must be readable (an HMAC needs it on both sides), so it is
-- kept as is: protect the database like the secrets store it is.
CREATE TABLE signing_keys (
  id            bigserial PRIMARY KEY,
  key_id        text NOT NULL UNIQUE,
  workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  secret        text NOT NULL,
  revoked_at    timestamptz,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX signing_keys_workspace_idx ON signing_keys (workspace_id, created_at DESC);
