-- Cancels child runs and, through the child sessions they delegated from, their own children.
-- p_ids are run ids, or the id of a parent turn (all its runs). A child that has not started never
-- will (its event is closed); one that is running is stopped by the caller (session control) and
-- its turn's end finds the run already cancelled. Returns the cancelled runs' child sessions and
-- the parent sessions to wake (their parked turns may be runnable now).
CREATE OR REPLACE FUNCTION herald_cancel_runs(p_ids uuid[])
RETURNS TABLE (run_id uuid, child_session_id uuid, parent_session_id uuid)
LANGUAGE plpgsql AS $$
DECLARE
  v_run uuid;
BEGIN
  FOR v_run IN
    WITH RECURSIVE tree AS (
      SELECT r.id, r.child_session_id FROM subagent_runs r WHERE r.id = ANY (p_ids) OR r.parent_turn_id = ANY (p_ids)
      UNION
      SELECT c.id, c.child_session_id FROM subagent_runs c JOIN tree t ON c.parent_session_id = t.child_session_id
    )
    SELECT t.id FROM tree t
  LOOP
    UPDATE subagent_runs SET status = 'cancelled', exit_reason = 'interrupted', finished_at = clock_timestamp()
      WHERE id = v_run AND status IN ('queued', 'running');
    IF FOUND THEN
      UPDATE inbound_events SET status = 'done', reply_text = 'Cancelled.', completed_at = clock_timestamp(), error = 'cancelled'
        WHERE session_id = (SELECT r.child_session_id FROM subagent_runs r WHERE r.id = v_run) AND status = 'pending';
      PERFORM herald_subagent_settle(v_run);
      RETURN QUERY SELECT r.id, r.child_session_id, r.parent_session_id FROM subagent_runs r WHERE r.id = v_run;
    END IF;
  END LOOP;
END $$;
