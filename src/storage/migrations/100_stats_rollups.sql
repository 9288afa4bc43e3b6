-- Traffic rollups for the workspace overview (issue 26, docs/console-api.md#stats):
-- what ingress accepted and what delivery did, counted in memory per
-- (workspace, queue, minute) and added here in batches (src/stats/), so that
-- GET /v1/tenants/{tenant}/stats reads a few thousand rows instead of the
-- per-attempt records.
--
-- Three resolutions of the same shape, written by the same statement: minutes
-- (the 1 h window), 10 minutes (24 h) and hours (7 d). Each window thus reads
-- one row per queue and point (60, 144 or 168), never sums of many: the answer
-- costs the same at 10 events a minute as at 10 000 (bench/results/stats-api.md).
--
-- Counts (int: a minute or an hour of one queue stays far below 2^31):
--   accepted                events accepted at ingress (202, not an idempotent replay; sandbox excluded)
--   delivered, failed       deliveries (event × target) that ended so in this minute
--   retrying                attempts that failed and are retried
--   attempts_*              attempts by what came back: 2xx, 3xx, 4xx, 5xx, a
--                           missed deadline (timeout), or no answer otherwise (network)
--   latency                 accept→deliver time of the delivered ones, a fixed
--                           log-scale histogram (src/stats/latency-buckets.ts):
--                           element i counts [2^((i-2)/2), 2^((i-1)/2)) ms,
--                           element 1 everything under 1 ms; trailing zeros left out.
--                           Fixed buckets add up across rows, so any window and
--                           any set of queues has its p50/p99 from plain sums.
CREATE TABLE stats_minute (
  workspace_id     bigint NOT NULL,
  at               timestamptz NOT NULL,
  queue_name       text NOT NULL,
  accepted         int NOT NULL DEFAULT 0,
  delivered        int NOT NULL DEFAULT 0,
  retrying         int NOT NULL DEFAULT 0,
  failed           int NOT NULL DEFAULT 0,
  attempts_2xx     int NOT NULL DEFAULT 0,
  attempts_3xx     int NOT NULL DEFAULT 0,
  attempts_4xx     int NOT NULL DEFAULT 0,
  attempts_5xx     int NOT NULL DEFAULT 0,
  attempts_timeout int NOT NULL DEFAULT 0,
  attempts_network int NOT NULL DEFAULT 0,
  latency          int[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (workspace_id, at, queue_name)
);
CREATE TABLE stats_ten_minutes (LIKE stats_minute INCLUDING DEFAULTS);
ALTER TABLE stats_ten_minutes ADD PRIMARY KEY (workspace_id, at, queue_name);
CREATE TABLE stats_hour (LIKE stats_minute INCLUDING DEFAULTS);
ALTER TABLE stats_hour ADD PRIMARY KEY (workspace_id, at, queue_name);
-- The retention sweep deletes by age (src/storage/retention-repo.ts): rows are
-- appended in time order, so a BRIN index finds the old ones without a scan
-- and costs next to nothing to keep up (and does not stop HOT updates).
CREATE INDEX stats_minute_at_idx ON stats_minute USING brin (at);
CREATE INDEX stats_ten_minutes_at_idx ON stats_ten_minutes USING brin (at);
CREATE INDEX stats_hour_at_idx ON stats_hour USING brin (at);

-- Two histograms added element by element (the upsert of a row already there).
CREATE FUNCTION stats_add_buckets(a int[], b int[]) RETURNS int[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(coalesce(a[i], 0) + coalesce(b[i], 0) ORDER BY i), '{}')
  FROM generate_series(1, greatest(coalesce(cardinality(a), 0), coalesce(cardinality(b), 0))) AS i
$$;
