-- The scheduler's clock is herald_cron_now(): the database clock plus cron_clock.offset_ms (0 in
-- production; tests move it forward to let hours pass in seconds). A cron fire waits in pg-boss
-- with start_after in database time (scheduled_for minus the offset at send), so when the offset
-- grows by d, every fire still waiting becomes due d earlier. Nothing else in pg-boss is touched.
CREATE OR REPLACE FUNCTION herald_cron_clock_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF to_regclass('pgboss.job') IS NOT NULL AND NEW.offset_ms <> OLD.offset_ms THEN
    UPDATE pgboss.job SET start_after = start_after - (NEW.offset_ms - OLD.offset_ms) * interval '1 millisecond'
      WHERE name = 'cron-fire' AND state IN ('created', 'retry');
  END IF;
  RETURN NULL;
END $$;
