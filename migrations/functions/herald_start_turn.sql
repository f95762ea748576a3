-- A new turn: the session's prompt (first turn only), the turn row, the user messages in the order
-- given (each owned by its author), and the events marked as taken by this turn. The turn answers
-- the author of its first message (turns.addressed_to): its replies and tool results are theirs.
CREATE OR REPLACE FUNCTION herald_start_turn(p_session uuid, p_token bigint, p_turn uuid, p_worker text,
                                  p_events uuid[], p_system_prompt text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  IF p_system_prompt IS NOT NULL THEN
    UPDATE sessions SET system_prompt = p_system_prompt WHERE id = p_session AND system_prompt IS NULL;
  END IF;
  INSERT INTO turns (id, session_id, worker, addressed_to) VALUES (p_turn, p_session, p_worker, (
    SELECT e.user_id FROM unnest(p_events) WITH ORDINALITY AS ids(id, ordinality)
    JOIN inbound_events e ON e.id = ids.id ORDER BY ids.ordinality LIMIT 1));
  PERFORM herald_append_messages(p_session, p_turn, (
    SELECT jsonb_agg(jsonb_build_object('role', 'user', 'content', e.text, 'owner', e.user_id) ORDER BY ids.ordinality)
    FROM unnest(p_events) WITH ORDINALITY AS ids(id, ordinality)
    JOIN inbound_events e ON e.id = ids.id));
  UPDATE inbound_events SET status = 'processing', turn_id = p_turn WHERE id = ANY (p_events);
END $$;
