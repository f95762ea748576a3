-- Answers a wait and makes its turn runnable again; the caller wakes the session. Returns the
-- session id, or NULL when the wait was not pending any more (answered twice, or expired).
CREATE OR REPLACE FUNCTION herald_resolve_wait(p_wait uuid, p_status text, p_answer text, p_by text, p_remember boolean)
RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  w tool_waits%ROWTYPE;
BEGIN
  UPDATE tool_waits SET status = p_status, answer = p_answer, answered_by = p_by, resolved_at = clock_timestamp()
    WHERE id = p_wait AND status = 'pending'
    RETURNING * INTO w;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF p_remember AND p_status = 'approved' AND w.pattern_key IS NOT NULL THEN
    INSERT INTO session_approvals (session_id, pattern_key, approved_by) VALUES (w.session_id, w.pattern_key, p_by)
    ON CONFLICT DO NOTHING;
  END IF;
  UPDATE turns SET status = 'running' WHERE id = w.turn_id AND status = 'waiting';
  RETURN w.session_id;
END $$;
