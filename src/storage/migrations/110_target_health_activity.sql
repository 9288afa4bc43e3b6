-- Target health, replay and the workspace activity feed (issue 26).

-- Per-target attempt counters in 5-minute buckets, added to by delivery nodes
-- in batches (src/delivery/target-health-counters.ts): the success rate and
-- latency over a window read a few hundred rows per target, never the
-- attempt records. latency_ms_sum / attempts is the mean; latency_ms_max the worst.
CREATE TABLE target_health_buckets (
  target_id       bigint NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  bucket_at       timestamptz NOT NULL,
  attempts        int NOT NULL DEFAULT 0,
  succeeded       int NOT NULL DEFAULT 0,
  latency_ms_sum  bigint NOT NULL DEFAULT 0,
  latency_ms_max  int NOT NULL DEFAULT 0,
  PRIMARY KEY (target_id, bucket_at)
);
CREATE INDEX target_health_buckets_at_idx ON target_health_buckets (bucket_at);

-- What the buckets do not say: the failures since the last 2xx (across
-- nodes, as their batches arrive), the last error, and the failure streak
-- the workspace was last warned about (one warning per streak, whichever
-- node sees the threshold pass first). streak_started_at outlives disabling
-- (targets.failing_since is cleared then): it is what a replay starts from.
CREATE TABLE target_health (
  target_id             bigint PRIMARY KEY REFERENCES targets(id) ON DELETE CASCADE,
  consecutive_failures  int NOT NULL DEFAULT 0,
  last_error            text,
  last_error_at         timestamptz,
  last_success_at       timestamptz,
  streak_started_at     timestamptz,
  warned_for            timestamptz
);

-- The workspace's activity feed: who did what, newest first by id.
-- actor: 'key:<key id>', 'user:<email or subject>', or 'delivery'.
CREATE TABLE activity (
  id            bigserial PRIMARY KEY,
  workspace_id  bigint NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  at            timestamptz NOT NULL DEFAULT now(),
  kind          text NOT NULL,
  actor         text NOT NULL,
  subject       text,
  detail        text
);
CREATE INDEX activity_workspace_idx ON activity (workspace_id, id);
CREATE INDEX activity_at_idx ON activity (at);

-- Replay: a bulk redelivery job of another kind (every delivery of the target
-- not acknowledged since a time), and jobs can be cancelled.
ALTER TABLE redelivery_jobs ADD COLUMN kind text NOT NULL DEFAULT 'failed' CHECK (kind IN ('failed', 'replay'));
ALTER TABLE redelivery_jobs DROP CONSTRAINT redelivery_jobs_status_check;
ALTER TABLE redelivery_jobs ADD CONSTRAINT redelivery_jobs_status_check CHECK (status IN ('running', 'done', 'failed', 'cancelled'));
-- A replayed delivery joins the lane of its partition key within its job
-- (NULL: a lane of its own, 'r:<id>', as for single redeliveries).
ALTER TABLE redelivery_requests ADD COLUMN lane_key text;
