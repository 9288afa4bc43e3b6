-- Delivery state (issue 5). Three concerns, three tables:
--
--   parked_deliveries   lanes waiting for a retry, durably: the partition's
--                       owner re-attempts them; Kafka offsets move past them.
--   event_log,          the attempt log behind GET /v1/tenants/{t}/events/{id}
--   delivery_log        and sandbox runs, written in batches; delivery_log also
--                       tells a new partition owner which replayed records are
--                       already finished, so they are not sent again.
--   redelivery_requests POST …/redeliver hands a copy of the record to the
--                       partition's owner, which turns it into a parked lane.
--
-- log_stream is '<consumer group>/<topic>': the delivery pipeline a row belongs
-- to. Partitions are owned within a consumer group, so a second group reading
-- the same topic (a blue/green deployment, the bench's replay) is a pipeline
-- of its own, with its own parked lanes and its own record of what it finished.

-- One row per (record, target) waiting in a parked lane. A lane is (stream,
-- partition, target, lane key); its rows run in seq (= Kafka offset) order. Only
-- the head carries next_attempt_at; rows behind it wait for it.
-- lane_key: 'k:<partition key>', 'o:<offset>' (no key: a lane of its own),
-- 'r:<request id>' (a redelivery).
CREATE TABLE parked_deliveries (
  log_stream        text NOT NULL,
  log_partition     int NOT NULL,
  target_id         bigint NOT NULL,
  lane_key          text NOT NULL,
  seq               bigint NOT NULL,
  event_id          text NOT NULL,
  record            bytea NOT NULL,
  attempts          int NOT NULL DEFAULT 0,
  first_attempt_at  timestamptz,
  next_attempt_at   timestamptz,
  last_error        text,
  PRIMARY KEY (log_stream, log_partition, target_id, lane_key, seq)
);

-- Events as delivery first saw them. target_ids: where the event was routed,
-- so deliveries not attempted yet show as `pending`.
CREATE TABLE event_log (
  event_id         text PRIMARY KEY,
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
  target_ids       bigint[] NOT NULL DEFAULT '{}'
);
CREATE INDEX event_log_run_idx ON event_log (workspace_id, run_id, received_at) WHERE run_id IS NOT NULL;

-- One row per (event, target): latest status and every attempt
-- ({ at, status, durationMs, error }), appended batch by batch.
CREATE TABLE delivery_log (
  event_id       text NOT NULL,
  target_id      bigint NOT NULL,
  status         text NOT NULL CHECK (status IN ('pending', 'delivered', 'retrying', 'failed', 'blocked')),
  attempts       jsonb NOT NULL DEFAULT '[]'::jsonb,
  log_stream     text NOT NULL,
  log_partition  int NOT NULL,
  log_offset     bigint NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (event_id, target_id)
);
CREATE INDEX delivery_log_offset_idx ON delivery_log (log_stream, log_partition, log_offset);

CREATE TABLE redelivery_requests (
  id             bigserial PRIMARY KEY,
  log_stream     text NOT NULL,
  log_partition  int NOT NULL,
  target_id      bigint NOT NULL,
  seq            bigint NOT NULL,
  event_id       text NOT NULL,
  record         bytea NOT NULL,
  requested_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX redelivery_requests_partition_idx ON redelivery_requests (log_stream, log_partition);
