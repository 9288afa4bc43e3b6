-- Flow control ceilings of a target (docs/flow-control.md): requests open to
-- it at once and started per second, at most. NULL: the delivery.flow defaults.
-- Columns rather than keys of `settings`, so the database enforces the bounds
-- the configuration API checks (src/api/v1/target-input.ts).
ALTER TABLE targets
  ADD COLUMN max_concurrency integer CHECK (max_concurrency BETWEEN 1 AND 10000),
  ADD COLUMN max_rate_per_second double precision CHECK (max_rate_per_second >= 0.01 AND max_rate_per_second <= 100000);
