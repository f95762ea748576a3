-- Appends a turn's messages after the session's last seq, in the order given. Each message is
-- owned by the person it names ('owner': the author of a user message), else by the person the
-- turn answers (turns.addressed_to), else by the session's starter (herald_message_scope).
CREATE OR REPLACE FUNCTION herald_append_messages(p_session uuid, p_turn uuid, p_messages jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  next_seq integer;
  addressee text;
BEGIN
  IF p_messages IS NULL OR jsonb_array_length(p_messages) = 0 THEN
    RETURN;
  END IF;
  next_seq := herald_last_seq(p_session);
  SELECT t.addressed_to INTO addressee FROM turns t WHERE t.id = p_turn;
  INSERT INTO messages (session_id, seq, turn_id, role, content, tool_calls, tool_call_id, tool_name, owner_id)
  SELECT p_session, next_seq + m.ordinality, p_turn, m.value ->> 'role', coalesce(m.value ->> 'content', ''),
         nullif(m.value -> 'tool_calls', 'null'::jsonb), m.value ->> 'tool_call_id', m.value ->> 'tool_name',
         coalesce(m.value ->> 'owner', addressee)
  FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS m(value, ordinality);
END $$;
