-- Writes the hook event of a change in the change's own transaction (triggers of
-- migrations/0032_hook_events_policy.sql): cron_fire when a cron run starts, delivery_failed when
-- an outbox row gives up. The scheduler fires the hooks (services/scheduler/src/hook-events.ts).
-- The key names what fired, so the same fire written twice is one event.
CREATE OR REPLACE FUNCTION herald_queue_hook_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  j record;
  v_profile text;
BEGIN
  IF TG_TABLE_NAME = 'cron_runs' THEN
    SELECT c.id, c.name, c.profile_id, c.creator_user_id, c.schedule INTO j FROM cron_jobs c WHERE c.id = NEW.job_id;
    INSERT INTO hook_events (event, key, profile_id, session_id, payload)
    VALUES ('cron_fire', 'cron_fire:' || NEW.id, j.profile_id, NEW.session_id,
            jsonb_build_object('job_id', NEW.job_id, 'job_name', j.name, 'schedule', j.schedule, 'run_id', NEW.id,
                               'trigger', NEW.trigger, 'scheduled_for', NEW.scheduled_for, 'session_id', NEW.session_id,
                               'profile_id', j.profile_id, 'user_id', j.creator_user_id))
    ON CONFLICT (key) DO NOTHING;
  ELSIF TG_TABLE_NAME = 'outbox' THEN
    SELECT s.profile_id INTO v_profile FROM sessions s WHERE s.id = NEW.session_id;
    -- Each time a row gives up is its own event (a retried row may fail again): the attempt count
    -- and the moment it failed name this one.
    INSERT INTO hook_events (event, key, profile_id, session_id, payload)
    VALUES ('delivery_failed', 'delivery_failed:' || NEW.id || ':' || NEW.attempts || ':' || extract(epoch FROM clock_timestamp()),
            v_profile, NEW.session_id,
            jsonb_build_object('delivery_id', NEW.id, 'platform', NEW.platform, 'source', NEW.source, 'target', NEW.target,
                               'attempts', NEW.attempts, 'error', NEW.last_error, 'session_id', NEW.session_id,
                               'profile_id', v_profile, 'text', NEW.text))
    ON CONFLICT (key) DO NOTHING;
  END IF;
  RETURN NULL;
END;
$$;
