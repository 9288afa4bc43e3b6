-- Since when a target has failed without a single success in between, across
-- every delivery node (contract §7: a target failing continuously for 5 days,
-- configurable, is disabled). NULL while it is healthy.
ALTER TABLE targets ADD COLUMN failing_since timestamptz;
