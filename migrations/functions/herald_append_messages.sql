-- Appends a turn's messages after the session's last seq, in the order given.
CREATE OR REPLACE FUNCTION herald_append_messages(p_session uuid, p_turn uuid, p_messages jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  next_seq integer;
BEGIN
  IF p_messages IS NULL OR jsonb_array_length(p_messages) = 0 THEN
    RETURN;
  END IF;
  SELECT coalesce(max(seq), 0) INTO next_seq FROM messages WHERE session_id = p_session;
  INSERT INTO messages (session_id, seq, turn_id, role, content, tool_calls, tool_call_id, tool_name)
  SELECT p_session, next_seq + m.ordinality, p_turn, m.value ->> 'role', coalesce(m.value ->> 'content', ''),
         nullif(m.value -> 'tool_calls', 'null'::jsonb), m.value ->> 'tool_call_id', m.value ->> 'tool_name'
  FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS m(value, ordinality);
END $$;
