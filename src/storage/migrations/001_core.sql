-- Core tables: licenses own workspaces; API keys (hash only) belong to a license
-- and optionally to one workspace; workspaces have queues and targets; routes
-- connect a queue to the targets it delivers to.

CREATE TABLE licenses (
  id          bigserial PRIMARY KEY,
  public_id   text NOT NULL UNIQUE,
  email       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspaces (
  id           bigserial PRIMARY KEY,
  public_id    text NOT NULL UNIQUE,
  license_id   bigint NOT NULL REFERENCES licenses(id),
  name         text NOT NULL,
  is_producer  boolean NOT NULL DEFAULT false,
  archived     boolean NOT NULL DEFAULT false,
  settings     jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- key_id is the public part of qak_<keyId>.<secret>; only SHA-256(secret) is kept.
CREATE TABLE api_keys (
  id            bigserial PRIMARY KEY,
  key_id        text NOT NULL UNIQUE,
  license_id    bigint NOT NULL REFERENCES licenses(id),
  workspace_id  bigint REFERENCES workspaces(id),
  profile       text NOT NULL CHECK (profile IN ('ingress', 'full', 'build')),
  secret_hash   bytea NOT NULL,
  queue_scopes  text[],
  name          text,
  revoked_at    timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE queues (
  id            bigserial PRIMARY KEY,
  public_id     text NOT NULL UNIQUE,
  workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  name          text NOT NULL,
  settings      jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);

CREATE TABLE targets (
  id            bigserial PRIMARY KEY,
  public_id     text NOT NULL UNIQUE,
  workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  name          text NOT NULL,
  url           text NOT NULL,
  settings      jsonb NOT NULL DEFAULT '{}'::jsonb,
  disabled_at   timestamptz,
  disabled_reason text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);

CREATE TABLE routes (
  queue_id    bigint NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
  target_id   bigint NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (queue_id, target_id)
);
CREATE INDEX routes_target_idx ON routes (target_id);
