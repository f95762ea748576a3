-- Failover between keys and models (docs/decisions/2026-12-05-provider-failover.md): which key of
-- which named provider answered each model call, and the keys cooling down after a 429, a 5xx, a
-- timeout or an auth error, shared by every process so no worker retries a key another just cooled.
-- Keys are named by their environment variable, never stored.
ALTER TABLE model_calls ADD COLUMN key_name text;

CREATE TABLE provider_cooldowns (
  key_id text PRIMARY KEY,
  until timestamptz NOT NULL,
  reason text NOT NULL
);
