-- A new turn: the session's prompt (first turn only), the turn row, the user messages in the order
-- given (each owned by its author), and the events marked as taken by this turn. The turn answers
-- the author of its first message (turns.addressed_to): its replies and tool results are theirs.
CREATE OR REPLACE FUNCTION herald_start_turn(p_session uuid, p_token bigint, p_turn uuid, p_worker text,
                                  p_events uuid[], p_system_prompt text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_event uuid;
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
  -- One event at a time: `id = ANY (p_events)` was planned anew on every call (the generic plan's
  -- guess at the array's length never beats a custom plan's), 0.08 ms a turn; by one id the
  -- connection keeps the plan. A turn has one event but for the messages a collect mode gathered.
  FOREACH v_event IN ARRAY coalesce(p_events, '{}') LOOP
    UPDATE inbound_events SET status = 'processing', turn_id = p_turn WHERE id = v_event;
  END LOOP;
END $$;
