-- A session's open events in the order its turns take them, with its queue mode. A turn parked on
-- a person's answer holds the session: later messages wait behind it, so none is returned. Given
-- the caller's lease token, the lease is released in the same call when nothing is left to run (the
-- end of every drain), and then no event is returned even if one arrived meanwhile: its own
-- wake-up claims the free session. The columns: the queue mode, whether a turn is parked, one open
-- event (NULLs when there is none) and whether this call released the lease.
CREATE OR REPLACE FUNCTION herald_open_inbox(p_session uuid, p_token bigint, p_limit integer)
RETURNS TABLE (queue_mode text, parked boolean, id uuid, text text, user_id text, user_name text, status text,
               turn_id uuid, released boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_parked boolean;
  v_released boolean := false;
BEGIN
  v_parked := EXISTS (SELECT 1 FROM turns t WHERE t.session_id = p_session AND t.status = 'waiting');
  IF p_token IS NOT NULL AND (v_parked OR NOT EXISTS (
       SELECT 1 FROM inbound_events e WHERE e.session_id = p_session AND e.status IN ('pending', 'processing'))) THEN
    UPDATE session_leases SET expires_at = clock_timestamp(), released = true
      WHERE session_id = p_session AND token = p_token;
    -- Not ours any more (only possible for a caller that did not check the lease first): say so.
    v_released := FOUND;
  END IF;
  RETURN QUERY
    SELECT s.queue_mode, v_parked, e.id, e.text, e.user_id, e.user_name, e.status, e.turn_id, v_released
    FROM sessions s
    LEFT JOIN inbound_events e
      ON e.session_id = s.id AND e.status IN ('pending', 'processing') AND NOT v_parked AND NOT v_released
    WHERE s.id = p_session
    ORDER BY e.received_at, e.id
    LIMIT p_limit;
END $$;
