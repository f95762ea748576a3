-- A child run has ended (done or cancelled): its tokens (its turns' own calls, as the delegate
-- report counts them; a review or a compression of it is counted in usage, not here) are added to
-- the parent session's, and
-- - foreground: when it was the last open run of the parent's wait, the wait is answered and the
--   parked turn becomes runnable (the caller wakes the parent session);
-- - background: its result is posted into the parent session as an internal event, durably, and
--   the parent answers it in a turn of its own.
-- The parent turn's row is locked first: herald_suspend_turn takes the same lock when it parks, so
-- a child that ends while its parent is still parking is seen by one of the two (see there).
CREATE OR REPLACE FUNCTION herald_subagent_settle(p_run uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  r subagent_runs%ROWTYPE;
  v_reply text;
BEGIN
  SELECT * INTO r FROM subagent_runs WHERE id = p_run;
  UPDATE sessions p
     SET delegated_input_tokens = p.delegated_input_tokens + c.input_tokens + c.delegated_input,
         delegated_output_tokens = p.delegated_output_tokens + c.output_tokens + c.delegated_output
    FROM (SELECT coalesce(sum(m.input_tokens), 0) AS input_tokens, coalesce(sum(m.output_tokens), 0) AS output_tokens,
                 (SELECT s.delegated_input_tokens FROM sessions s WHERE s.id = r.child_session_id) AS delegated_input,
                 (SELECT s.delegated_output_tokens FROM sessions s WHERE s.id = r.child_session_id) AS delegated_output
            FROM model_calls m WHERE m.session_id = r.child_session_id AND m.kind = 'turn') c
   WHERE p.id = r.parent_session_id;
  PERFORM 1 FROM turns WHERE id = r.parent_turn_id FOR UPDATE;
  IF r.wait_id IS NOT NULL THEN
    IF NOT EXISTS (SELECT 1 FROM subagent_runs o WHERE o.wait_id = r.wait_id AND o.status IN ('queued', 'running')) THEN
      PERFORM herald_resolve_wait(r.wait_id, 'answered', NULL, 'subagents', false);
    END IF;
    RETURN;
  END IF;
  -- The child's final answer: herald_finish_turn appends it before it ends the turn (this runs
  -- from that update), and before the event gets its reply_text.
  SELECT m.content INTO v_reply FROM messages m WHERE m.session_id = r.child_session_id AND m.role = 'assistant'
   ORDER BY m.seq DESC LIMIT 1;
  INSERT INTO inbound_events (id, session_id, dedupe_key, platform, user_id, user_name, text)
  SELECT gen_random_uuid(), r.parent_session_id, 'subagent-result:' || r.id, s.platform, r.user_id, 'subagent',
         '[Background task ' || r.id || ' ' || CASE WHEN r.status = 'cancelled' THEN 'was cancelled' ELSE 'finished (' || r.exit_reason || ')' END
         || '. Goal: ' || left(r.goal, 500) || E']\n\n' || coalesce(nullif(v_reply, ''), '(no report)')
  FROM sessions s WHERE s.id = r.parent_session_id
  ON CONFLICT (dedupe_key) DO NOTHING;
END $$;
