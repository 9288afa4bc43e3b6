-- Bounded storage (issue 24, docs/decisions/bounded-storage.md): the per-event
-- records become range-partitioned by the event's receive time, so retention
-- drops whole partitions (no DELETE scans on the hot tables), and a workspace
-- may keep its events for less than retention.hours.
--
-- The retention sweep (src/jobs/retention-sweep.ts) creates partitions ahead of
-- time and drops those entirely past retention; their names carry their bounds
-- (<table>_p<from>_<to>, UTC, src/storage/partition-plan.ts). A row whose
-- partition does not exist (yet) lands in the DEFAULT partition, so an insert
-- never fails for want of a partition; the sweep moves such rows out when it
-- creates their partition, and deletes them in batches once past retention.
--
-- Existing rows are kept: the old tables are renamed, daily partitions covering
-- their receive times are created, the rows copied, the old tables dropped (one
-- transaction, like every migration: the tables are locked while it runs, so a
-- large log is best migrated in a quiet moment, docs/operations.md#retention).

-- NULL: retention.hours. Smaller values only shorten retention (the sweep
-- deletes that workspace's older rows in batches); larger ones change nothing,
-- since partitions are dropped at retention.hours whatever the workspace.
ALTER TABLE workspaces ADD COLUMN retention_hours numeric CHECK (retention_hours > 0);

ALTER TABLE event_log RENAME TO event_log_unpartitioned;
ALTER INDEX event_log_pkey RENAME TO event_log_unpartitioned_pkey;
DROP INDEX event_log_run_idx;
DROP INDEX event_log_queue_idx;
ALTER TABLE delivery_log RENAME TO delivery_log_unpartitioned;
ALTER INDEX delivery_log_pkey RENAME TO delivery_log_unpartitioned_pkey;
DROP INDEX delivery_log_offset_idx;
DROP INDEX delivery_log_open_idx;

-- The partition key is part of every unique key. received_at is the time the
-- event id carries (src/ids.ts), so GET …/events/{id} probes one partition's
-- primary key. Time first: rows arrive in about time order, so the index fills
-- its pages instead of splitting them in the middle (an id without a time,
-- only from before ids carried one, is found by scanning).
-- Columns are ordered for alignment: 8-byte ones first, no padding between.
CREATE TABLE event_log (
  received_at      timestamptz NOT NULL,
  workspace_id     bigint NOT NULL,
  log_offset       bigint NOT NULL,
  log_partition    int NOT NULL,
  event_id         text NOT NULL,
  queue_name       text NOT NULL,
  event_type       text,
  group_key        text,
  partition_key    text,
  idempotency_key  text,
  run_id           text,
  target_ids       bigint[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (received_at, event_id)
) PARTITION BY RANGE (received_at);
CREATE INDEX event_log_run_idx ON event_log (workspace_id, run_id, received_at) WHERE run_id IS NOT NULL;
-- The event list's keyset (received_at, event_id), newest first, read
-- backwards: ascending, it is appended to at its end (a descending index
-- split every page in two, half empty). Ties on received_at (the same
-- millisecond) are sorted after the scan, so event_id is not in every entry.
CREATE INDEX event_log_queue_idx ON event_log (workspace_id, queue_name, received_at);
CREATE TABLE event_log_default PARTITION OF event_log DEFAULT;

-- One row per (event, target), found from its event by where the log holds
-- the event (log_partition, log_offset) and its receive time, which is also
-- its partition: the event id is not repeated, and the primary key serves the
-- replay check of a new partition owner (highestOffset, finishedBetween) too.
-- log_stream: the first 4 bytes of md5('<consumer group>/<topic>') as an int
-- (src/storage/delivery-record-repo.ts streamKey), compared on the rows found.
-- attempts: compact text (src/storage/attempt-codec.ts), appended to.
CREATE TABLE delivery_log (
  received_at    timestamptz NOT NULL,
  log_offset     bigint NOT NULL,
  target_id      bigint NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  log_partition  int NOT NULL,
  log_stream     int NOT NULL,
  status         text NOT NULL CHECK (status IN ('pending', 'delivered', 'retrying', 'failed', 'blocked')),
  attempts       text NOT NULL DEFAULT '',
  PRIMARY KEY (log_partition, log_offset, target_id, received_at)
) PARTITION BY RANGE (received_at);
CREATE INDEX delivery_log_open_idx ON delivery_log (target_id, status) WHERE status <> 'delivered';
CREATE TABLE delivery_log_default PARTITION OF delivery_log DEFAULT;

-- Daily partitions over the existing rows' receive times (the sweep continues
-- at the width retention.hours asks for, from where these end).
DO $$
DECLARE
  lo timestamptz;
  hi timestamptz;
  day timestamptz;
  suffix text;
BEGIN
  SELECT min(received_at), max(received_at) INTO lo, hi FROM event_log_unpartitioned;
  IF lo IS NULL THEN
    RETURN;
  END IF;
  day := date_trunc('day', lo AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  WHILE day <= hi LOOP
    suffix := to_char(day AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS') || '_'
           || to_char((day + interval '1 day') AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS');
    EXECUTE format('CREATE TABLE %I PARTITION OF event_log FOR VALUES FROM (%L) TO (%L)',
                   'event_log_p' || suffix, day, day + interval '1 day');
    EXECUTE format('CREATE TABLE %I PARTITION OF delivery_log FOR VALUES FROM (%L) TO (%L)',
                   'delivery_log_p' || suffix, day, day + interval '1 day');
    day := day + interval '1 day';
  END LOOP;
END $$;

INSERT INTO event_log (received_at, workspace_id, log_offset, log_partition, event_id, queue_name, event_type, group_key,
                       partition_key, idempotency_key, run_id, target_ids)
SELECT received_at, workspace_id, log_offset, log_partition, event_id, queue_name, event_type, group_key,
       partition_key, idempotency_key, run_id, target_ids
FROM event_log_unpartitioned;
-- Attempts from jsonb objects to the compact text, times relative to the
-- event's receipt. A delivery without its event (written before it, or
-- redelivered before it was consumed) is kept by its own last update time.
INSERT INTO delivery_log (received_at, log_offset, target_id, updated_at, log_partition, log_stream, status, attempts)
SELECT r.at, d.log_offset, d.target_id, d.updated_at, d.log_partition,
       ('x' || substr(md5(d.log_stream), 1, 8))::bit(32)::int, d.status,
       coalesce((SELECT string_agg(CASE
                  WHEN a->>'simulated' = 'true' THEN jsonb_build_array(ms, a->'status', a->'durationMs', a->'error', 1)::text
                  WHEN jsonb_typeof(a->'error') = 'string' THEN jsonb_build_array(ms, a->'status', a->'durationMs', a->'error')::text
                  ELSE jsonb_build_array(ms, a->'status', a->'durationMs')::text END, ',' ORDER BY n)
                 FROM jsonb_array_elements(d.attempts) WITH ORDINALITY AS x(a, n),
                      LATERAL (SELECT round(extract(epoch FROM ((a->>'at')::timestamptz - r.at)) * 1000)::bigint AS ms) m), '')
FROM delivery_log_unpartitioned d
LEFT JOIN event_log_unpartitioned e ON e.event_id = d.event_id
CROSS JOIN LATERAL (SELECT coalesce(e.received_at, d.updated_at) AS at) r;
DROP TABLE delivery_log_unpartitioned;
DROP TABLE event_log_unpartitioned;

-- What the sweep deletes from the small tables by age.
CREATE INDEX redelivery_jobs_finished_idx ON redelivery_jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX redelivery_requests_requested_idx ON redelivery_requests (requested_at);
