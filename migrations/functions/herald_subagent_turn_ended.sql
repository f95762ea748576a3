-- Trigger on turns (migrations/0030_subagents.sql): a child session's turn starting marks its run
-- running; its end records the exit reason and settles the run (herald_subagent_settle), in the
-- transaction that ends the turn, so a run's end is recorded exactly once whichever worker ran it.
-- The turn's error names why it ended: 'max_iterations' for a child over its budget, 'limited' for
-- one the person's token budget stopped before a model call (a refusal, not an error).
CREATE OR REPLACE FUNCTION herald_subagent_turn_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_run uuid;
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE subagent_runs SET status = 'running', started_at = clock_timestamp()
      WHERE child_session_id = NEW.session_id AND status = 'queued';
    RETURN NEW;
  END IF;
  UPDATE subagent_runs
     SET status = 'done', finished_at = clock_timestamp(),
         exit_reason = CASE WHEN NEW.error = 'max_iterations' THEN 'max_iterations'
                            WHEN NEW.error = 'stopped' THEN 'interrupted'
                            WHEN NEW.error = 'limited' THEN 'refused'
                            WHEN NEW.status = 'failed' THEN 'error'
                            ELSE 'completed' END
   WHERE child_session_id = NEW.session_id AND status IN ('queued', 'running')
  RETURNING id INTO v_run;
  IF v_run IS NOT NULL THEN
    PERFORM herald_subagent_settle(v_run);
  END IF;
  RETURN NEW;
END $$;
