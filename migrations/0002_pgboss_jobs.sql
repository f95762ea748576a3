-- Background reviews and cron fires are pg-boss jobs (docs/decisions/2026-12-01-pg-boss.md).
-- pg-boss keeps its own tables in the schema pgboss; it holds the claims, retries, backoff, expiry
-- and dead letters, so a review row keeps only the record its handler writes.
DROP INDEX reviews_open_idx;
ALTER TABLE reviews
  DROP COLUMN next_attempt_at,
  DROP COLUMN claim_token,
  DROP COLUMN claimed_by,
  DROP COLUMN claim_expires_at;
DROP SEQUENCE review_claim_tokens;
-- Reviews not finished yet: a reviewer starting up re-sends their jobs (a no-op when they exist).
CREATE INDEX reviews_open_idx ON reviews (created_at) WHERE status IN ('pending', 'running');

-- Moving the test clock moves the cron fires waiting in pg-boss with it (herald_cron_clock_moved).
CREATE TRIGGER cron_clock_moved AFTER UPDATE OF offset_ms ON cron_clock
  FOR EACH ROW EXECUTE FUNCTION herald_cron_clock_moved();
