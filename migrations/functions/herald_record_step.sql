-- One step inside a turn: an assistant message asking for tools (with its model call) or the
-- tool results.
CREATE OR REPLACE FUNCTION herald_record_step(p_session uuid, p_token bigint, p_turn uuid, p_messages jsonb,
                                   p_model_call jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  PERFORM herald_record_model_call(p_session, p_turn, p_model_call);
  PERFORM herald_append_messages(p_session, p_turn, p_messages);
  IF p_model_call IS NOT NULL THEN
    UPDATE turns SET iterations = iterations + 1 WHERE id = p_turn;
  END IF;
END $$;
