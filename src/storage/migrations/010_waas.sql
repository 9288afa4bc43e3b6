-- The producer side (/waas/*, docs/api.md#producer-api-waas): console memberships,
-- the catalog of published streams, integrations and their subscriptions,
-- activations of group keys, packages and blocks.

-- A console user (the identity provider's `sub`) and their role on a workspace.
CREATE TABLE memberships (
  workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  subject       text NOT NULL,
  role          text NOT NULL CHECK (role IN ('Owner', 'Admin', 'Member')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, subject)
);
CREATE INDEX memberships_subject_idx ON memberships (subject);

-- One published stream of a producer workspace; its queue carries the events.
-- A queue deleted through /v1 leaves the entry without a queue until the next
-- PUT /waas/streams recreates it.
CREATE TABLE catalog_entries (
  id                     bigserial PRIMARY KEY,
  public_id              text NOT NULL UNIQUE,
  producer_workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  name                   text NOT NULL,
  description            text NOT NULL DEFAULT '',
  event_types            jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Opaque (docs/api.md): kept byte for byte as sent.
  payload_schema         text,
  status                 text NOT NULL CHECK (status IN ('Published', 'Deprecated')),
  queue_id               bigint REFERENCES queues(id) ON DELETE SET NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (producer_workspace_id, name)
);
CREATE INDEX catalog_entries_queue_idx ON catalog_entries (queue_id);

-- A partner invited by a producer. Only SHA-256 of the invite token is kept.
-- The receiving workspace is set on accept and lives under the partner's license.
CREATE TABLE integrations (
  id                      bigserial PRIMARY KEY,
  public_id               text NOT NULL UNIQUE,
  producer_workspace_id   bigint NOT NULL REFERENCES workspaces(id),
  invited_email           text NOT NULL,
  status                  text NOT NULL CHECK (status IN ('Pending', 'Active')),
  invite_token_hash       bytea NOT NULL,
  receiving_workspace_id  bigint REFERENCES workspaces(id),
  created_at              timestamptz NOT NULL DEFAULT now(),
  accepted_at             timestamptz
);
CREATE INDEX integrations_producer_idx ON integrations (producer_workspace_id);
CREATE INDEX integrations_receiving_idx ON integrations (receiving_workspace_id);

-- A partner's subscription to one stream, delivered through a queue of the
-- receiving workspace named after the stream (docs/api.md#producer-api-waas).
CREATE TABLE subscriptions (
  id                  bigserial PRIMARY KEY,
  public_id           text NOT NULL UNIQUE,
  integration_id      bigint NOT NULL REFERENCES integrations(id),
  catalog_entry_id    bigint NOT NULL REFERENCES catalog_entries(id),
  receiving_queue_id  bigint REFERENCES queues(id) ON DELETE SET NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (integration_id, catalog_entry_id)
);
CREATE INDEX subscriptions_entry_idx ON subscriptions (catalog_entry_id);

-- The routing gate's second half: an event reaches an integration only with an
-- Active row for (producer, the event's group key, integration). Revoking keeps
-- the row (and its public id) so a later activation answers the same id.
CREATE TABLE activations (
  id                     bigserial PRIMARY KEY,
  public_id              text NOT NULL UNIQUE,
  producer_workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  group_key              text NOT NULL,
  integration_id         bigint NOT NULL REFERENCES integrations(id),
  status                 text NOT NULL CHECK (status IN ('Active', 'Revoked')),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (producer_workspace_id, group_key, integration_id)
);

-- Status values as the reference's state table writes them (Active, archived).
CREATE TABLE packages (
  id                     bigserial PRIMARY KEY,
  public_id              text NOT NULL UNIQUE,
  producer_workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  key                    text NOT NULL,
  name                   text NOT NULL,
  description            text,
  status                 text NOT NULL CHECK (status IN ('Active', 'archived')),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (producer_workspace_id, key)
);

CREATE TABLE package_streams (
  package_id        bigint NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
  catalog_entry_id  bigint NOT NULL REFERENCES catalog_entries(id) ON DELETE CASCADE,
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (package_id, catalog_entry_id)
);
CREATE INDEX package_streams_entry_idx ON package_streams (catalog_entry_id);

-- Opt-outs of one integration (docs/api.md#resources-and-states); whether a subscription is
-- paused is computed from these rows (src/routing/block-coverage.ts), never stored.
CREATE TABLE stream_blocks (
  integration_id    bigint NOT NULL REFERENCES integrations(id),
  catalog_entry_id  bigint NOT NULL REFERENCES catalog_entries(id) ON DELETE CASCADE,
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (integration_id, catalog_entry_id)
);

CREATE TABLE package_blocks (
  integration_id  bigint NOT NULL REFERENCES integrations(id),
  package_id      bigint NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (integration_id, package_id)
);
