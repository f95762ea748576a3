-- The scheduler's clock: the database clock plus cron_clock's offset, 0 in production; tests move
-- the offset forward instead of waiting for real minutes.
CREATE OR REPLACE FUNCTION herald_cron_now() RETURNS timestamptz
LANGUAGE sql AS $$
  SELECT clock_timestamp() + coalesce((SELECT offset_ms FROM cron_clock), 0) * interval '1 millisecond';
$$;
