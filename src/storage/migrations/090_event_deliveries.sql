-- Fewer bytes per (event, target) (issue 24 item 4, docs/decisions/bounded-storage.md):
-- an event's delivery state moves INTO its event_log row, and delivery_log goes.
-- One row per event instead of one per event plus one per (event, target): one
-- tuple header, one set of keys and one primary-key entry per event fewer.
--
-- event_log.deliveries (src/storage/delivery-state-codec.ts): one line per
-- target the event was routed to (or delivered to since), '\n' between lines,
--
--   <target id>:<status>:<updated ms>:<attempts>
--
-- status one letter (p pending, d delivered, r retrying, f failed, b blocked);
-- updated ms: when the database last wrote the line, in ms after the event's
-- received_at (empty: routed, never written since); attempts: the compact text
-- of src/storage/attempt-codec.ts (JSON arrays, so never a raw newline).
--
-- Existing rows are kept: the old tables and their partitions are renamed
-- (old_…), the new table gets the same partitions (same bounds and names), the
-- rows are copied with their deliveries folded in, the old tables dropped. A
-- delivery row whose event row did not exist (written before its event, or
-- redelivered before it was consumed) has nothing to be shown under, and goes.

-- The rename: every table and index of the two partition trees.
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT c.relname, c.relkind FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
    WHERE (c.relname LIKE 'event\_log%' OR c.relname LIKE 'delivery\_log%') AND c.relkind IN ('r', 'p', 'i', 'I')
  LOOP
    IF r.relkind IN ('i', 'I') THEN
      EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, 'old_' || r.relname);
    ELSE
      EXECUTE format('ALTER TABLE %I RENAME TO %I', r.relname, 'old_' || r.relname);
    END IF;
  END LOOP;
END $$;

-- log_stream: the first 4 bytes of md5('<consumer group>/<topic>') as an int
-- (src/storage/delivery-record-repo.ts streamKey), the stream whose consumer
-- wrote the row; the replay check of a new partition owner compares it on the
-- rows it finds by primary key (the fetched records' receive times and ids),
-- so no index by (log_partition, log_offset) is kept (60 bytes per event
-- measured: four log partitions insert at four places of it, splitting its
-- pages in halves). Columns ordered for alignment.
CREATE TABLE event_log (
  received_at      timestamptz NOT NULL,
  workspace_id     bigint NOT NULL,
  log_offset       bigint NOT NULL,
  log_partition    int NOT NULL,
  log_stream       int NOT NULL,
  event_id         text NOT NULL,
  queue_name       text NOT NULL,
  event_type       text,
  group_key        text,
  partition_key    text,
  idempotency_key  text,
  run_id           text,
  deliveries       text NOT NULL DEFAULT '',
  CONSTRAINT event_log_pkey PRIMARY KEY (received_at, event_id)
) PARTITION BY RANGE (received_at);

-- A line merged into deliveries, as every write does it (delivery records,
-- redelivery): the target's line gets the new status and update time and the
-- new attempts appended; a target without a line gets one at the end. `patch`
-- holds lines '<target id>:<status>::<attempts>' (no update time: this sets it).
CREATE FUNCTION event_deliveries_merge(stored text, patch text, updated_ms bigint) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  lines text[] := CASE WHEN stored = '' THEN ARRAY[]::text[] ELSE string_to_array(stored, E'\n') END;
  change text;
  target text;
  status text;
  added text;
  kept text;
  i int;
  found boolean;
BEGIN
  IF patch = '' THEN
    RETURN stored;
  END IF;
  FOREACH change IN ARRAY string_to_array(patch, E'\n') LOOP
    target := split_part(change, ':', 1);
    status := split_part(change, ':', 2);
    added := substr(change, length(target) + 5);
    found := false;
    FOR i IN 1 .. coalesce(array_length(lines, 1), 0) LOOP
      IF starts_with(lines[i], target || ':') THEN
        kept := substr(lines[i], length(target) + length(split_part(lines[i], ':', 3)) + 5);
        lines[i] := target || ':' || status || ':' || updated_ms || ':'
                 || CASE WHEN kept = '' THEN added WHEN added = '' THEN kept ELSE kept || ',' || added END;
        found := true;
        EXIT;
      END IF;
    END LOOP;
    IF NOT found THEN
      lines := lines || (target || ':' || status || ':' || updated_ms || ':' || added);
    END IF;
  END LOOP;
  RETURN array_to_string(lines, E'\n');
END $$;

-- Some delivery of the event is not delivered (pending, retrying, failed,
-- blocked): the partial index below holds only such events, so the status
-- filters and bulk redelivery read the few that are, not the whole queue.
-- Queries spell it as this call, so the planner matches it to the index.
CREATE FUNCTION event_deliveries_open(deliveries text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT deliveries ~ E'(^|\n)\\d+:[prfb]:' $$;

CREATE INDEX event_log_run_idx ON event_log (workspace_id, run_id, received_at) WHERE run_id IS NOT NULL;
-- The event list's keyset (received_at, event_id), newest first, read backwards
-- (migration 070).
CREATE INDEX event_log_queue_idx ON event_log (workspace_id, queue_name, received_at);
CREATE INDEX event_log_open_idx ON event_log (workspace_id, queue_name, received_at) WHERE event_deliveries_open(deliveries);

-- The same partitions as before, same bounds, same names (the sweep reads
-- them by name), DEFAULT included.
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'old_event_log'::regclass
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF event_log %s', substr(r.relname, 5), r.bound);
  END LOOP;
  IF NOT EXISTS (SELECT 1 FROM pg_class WHERE relname = 'event_log_default' AND relnamespace = current_schema()::regnamespace) THEN
    CREATE TABLE event_log_default PARTITION OF event_log DEFAULT;
  END IF;
END $$;

-- Each event with its deliveries: a line per delivery row (by target id), then
-- a pending line per routed target without a row. Rows go in key order, so
-- the primary key is appended to.
INSERT INTO event_log (received_at, workspace_id, log_offset, log_partition, log_stream, event_id, queue_name, event_type,
                       group_key, partition_key, idempotency_key, run_id, deliveries)
SELECT e.received_at, e.workspace_id, e.log_offset, e.log_partition,
       coalesce(s.stream, (SELECT log_stream FROM old_delivery_log LIMIT 1), 0), e.event_id, e.queue_name, e.event_type,
       e.group_key, e.partition_key, e.idempotency_key, e.run_id,
       coalesce(array_to_string(ARRAY(
         SELECT line FROM (
           SELECT 0 AS k, d.target_id AS t,
                  d.target_id || ':' || CASE d.status WHEN 'pending' THEN 'p' WHEN 'delivered' THEN 'd' WHEN 'retrying' THEN 'r'
                                                      WHEN 'failed' THEN 'f' ELSE 'b' END
                  || ':' || floor(extract(epoch FROM d.updated_at - e.received_at) * 1000)::bigint || ':' || d.attempts AS line
           FROM old_delivery_log d
           WHERE d.log_partition = e.log_partition AND d.log_offset = e.log_offset AND d.received_at = e.received_at
           UNION ALL
           SELECT 1, r.t, r.t || ':p::'
           FROM unnest(e.target_ids) WITH ORDINALITY AS r(t, n)
           WHERE NOT EXISTS (SELECT 1 FROM old_delivery_log d
                             WHERE d.log_partition = e.log_partition AND d.log_offset = e.log_offset
                               AND d.received_at = e.received_at AND d.target_id = r.t)
         ) l ORDER BY k, t), E'\n'), '')
FROM old_event_log e
LEFT JOIN LATERAL (SELECT min(d.log_stream) AS stream FROM old_delivery_log d
                   WHERE d.log_partition = e.log_partition AND d.log_offset = e.log_offset AND d.received_at = e.received_at) s ON true
ORDER BY e.received_at, e.event_id;

DROP TABLE old_delivery_log;
DROP TABLE old_event_log;
