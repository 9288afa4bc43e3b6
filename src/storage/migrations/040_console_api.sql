-- The console's API (issue 14): the event list of a queue and bulk redelivery.
--
-- The event list reads what delivery already writes in batches (event_log,
-- delivery_log), never a row per accepted event on the ingress path: an event
-- is listed once a delivery node has consumed it.

-- Newest first, keyset pagination by (received_at, event_id) within a queue.
CREATE INDEX event_log_queue_idx ON event_log (workspace_id, queue_name, received_at DESC, event_id DESC);

-- Deliveries that are not delivered: what the status filter and bulk
-- redelivery look for among many delivered ones. Partial, so the common case
-- (a delivery written once as delivered) never touches it.
CREATE INDEX delivery_log_open_idx ON delivery_log (target_id, status) WHERE status <> 'delivered';

-- A bulk redelivery of one target's failed deliveries received in [from_at, to_at).
-- The job runs on the management node that took the request; its progress is
-- here so that any management node answers the poll. heartbeat_at moves while
-- it runs: a running job whose heartbeat stopped (its node went away) is
-- reported failed. cutoff_at: only deliveries that were failed by then count.
CREATE TABLE redelivery_jobs (
  id            bigserial PRIMARY KEY,
  public_id     text NOT NULL UNIQUE,
  workspace_id  bigint NOT NULL REFERENCES workspaces(id),
  target_id     bigint NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  from_at       timestamptz NOT NULL,
  to_at         timestamptz NOT NULL,
  cutoff_at     timestamptz NOT NULL,
  status        text NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  total         int NOT NULL,
  done          int NOT NULL DEFAULT 0,
  failed        int NOT NULL DEFAULT 0,
  error         text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  heartbeat_at  timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
-- One running job per target: two would hand the same deliveries over twice.
CREATE UNIQUE INDEX redelivery_jobs_running_idx ON redelivery_jobs (target_id) WHERE status = 'running';
