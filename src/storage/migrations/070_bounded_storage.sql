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
-- event id carries (src/ids.ts), so GET …/events/{id} probes one partition.
CREATE TABLE event_log (
  event_id         text NOT NULL,
  workspace_id     bigint NOT NULL,
  queue_name       text NOT NULL,
  event_type       text,
  group_key        text,
  partition_key    text,
  idempotency_key  text,
  received_at      timestamptz NOT NULL,
  log_partition    int NOT NULL,
  log_offset       bigint NOT NULL,
  run_id           text,
  target_ids       bigint[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (event_id, received_at)
) PARTITION BY RANGE (received_at);
CREATE INDEX event_log_run_idx ON event_log (workspace_id, run_id, received_at) WHERE run_id IS NOT NULL;
-- The event list's keyset (received_at, event_id), newest first: ties on
-- received_at (same millisecond) are sorted after the index scan, so event_id
-- need not be in every entry.
CREATE INDEX event_log_queue_idx ON event_log (workspace_id, queue_name, received_at DESC);
CREATE TABLE event_log_default PARTITION OF event_log DEFAULT;

-- received_at: the event's, so an event's deliveries sit in the partitions of
-- the same range as the event and go with it.
CREATE TABLE delivery_log (
  event_id       text NOT NULL,
  target_id      bigint NOT NULL,
  status         text NOT NULL CHECK (status IN ('pending', 'delivered', 'retrying', 'failed', 'blocked')),
  attempts       jsonb NOT NULL DEFAULT '[]'::jsonb,
  log_stream     text NOT NULL,
  log_partition  int NOT NULL,
  log_offset     bigint NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  received_at    timestamptz NOT NULL,
  PRIMARY KEY (event_id, target_id, received_at)
) PARTITION BY RANGE (received_at);
-- The replay check of a new partition owner (highestOffset, finishedBetween):
-- log_stream is compared on the rows found, not kept in every index entry.
CREATE INDEX delivery_log_offset_idx ON delivery_log (log_partition, log_offset);
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

INSERT INTO event_log SELECT event_id, workspace_id, queue_name, event_type, group_key, partition_key, idempotency_key,
                             received_at, log_partition, log_offset, run_id, target_ids
FROM event_log_unpartitioned;
-- A delivery without its event (written before it, or redelivered before it
-- was consumed) is kept by its own last update time.
INSERT INTO delivery_log SELECT d.event_id, d.target_id, d.status, d.attempts, d.log_stream, d.log_partition, d.log_offset,
                                d.updated_at, coalesce(e.received_at, d.updated_at)
FROM delivery_log_unpartitioned d LEFT JOIN event_log_unpartitioned e ON e.event_id = d.event_id;
DROP TABLE delivery_log_unpartitioned;
DROP TABLE event_log_unpartitioned;

-- What the sweep deletes from the small tables by age.
CREATE INDEX redelivery_jobs_finished_idx ON redelivery_jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX redelivery_requests_requested_idx ON redelivery_requests (requested_at);
