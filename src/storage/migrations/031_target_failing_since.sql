-- Since when a target has failed without a single success in between, across
-- every delivery node (docs/delivery.md#delivery-engine: a target failing continuously for 5 days,
-- configurable, is disabled). NULL while it is healthy.
ALTER TABLE targets ADD COLUMN failing_since timestamptz;
