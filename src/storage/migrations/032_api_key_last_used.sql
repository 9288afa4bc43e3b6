-- When an API key last authenticated a request, for the key list (issue 13:
-- find a key that is no longer used before revoking it). Written in batches,
-- at most once a minute per key and node, so it is approximate by design.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
