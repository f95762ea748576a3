-- Each write of a turn as one function call: one round trip instead of a transaction of five to
-- eight statements, with the lease check inside (see docs/decisions/2026-11-30-turn-functions.md).

CREATE FUNCTION herald_check_lease(p_session uuid, p_token bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  -- FOR SHARE: a competing claim must lock this row, so it waits until our write commits.
  PERFORM 1 FROM session_leases
    WHERE session_id = p_session AND token = p_token AND expires_at > clock_timestamp()
    FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'lease on session % was lost', p_session USING ERRCODE = 'HL001';
  END IF;
END $$;

CREATE FUNCTION herald_append_messages(p_session uuid, p_turn uuid, p_messages jsonb) RETURNS void
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

CREATE FUNCTION herald_record_model_call(p_session uuid, p_turn uuid, p_call jsonb) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO model_calls (session_id, turn_id, provider, model, input_tokens, output_tokens,
                           cached_input_tokens, cache_write_tokens, latency_ms, finish_reason)
  SELECT p_session, p_turn, p_call ->> 'provider', p_call ->> 'model', (p_call ->> 'input_tokens')::integer,
         (p_call ->> 'output_tokens')::integer, (p_call ->> 'cached_input_tokens')::integer,
         (p_call ->> 'cache_write_tokens')::integer, (p_call ->> 'latency_ms')::integer, p_call ->> 'finish_reason'
  WHERE p_call IS NOT NULL;
$$;

-- A new turn: the session's prompt (first turn only), the turn row, the user messages in the order
-- given, and the events marked as taken by this turn.
CREATE FUNCTION herald_start_turn(p_session uuid, p_token bigint, p_turn uuid, p_worker text,
                                  p_events uuid[], p_system_prompt text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  IF p_system_prompt IS NOT NULL THEN
    UPDATE sessions SET system_prompt = p_system_prompt WHERE id = p_session AND system_prompt IS NULL;
  END IF;
  INSERT INTO turns (id, session_id, worker) VALUES (p_turn, p_session, p_worker);
  PERFORM herald_append_messages(p_session, p_turn, (
    SELECT jsonb_agg(jsonb_build_object('role', 'user', 'content', e.text) ORDER BY ids.ordinality)
    FROM unnest(p_events) WITH ORDINALITY AS ids(id, ordinality)
    JOIN inbound_events e ON e.id = ids.id));
  UPDATE inbound_events SET status = 'processing', turn_id = p_turn WHERE id = ANY (p_events);
END $$;

-- A crashed or handed-back turn taken up again; only a crash takeover counts against the budget.
CREATE FUNCTION herald_resume_turn(p_session uuid, p_token bigint, p_turn uuid, p_worker text,
                                   p_count_attempt boolean) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  result integer;
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  UPDATE turns SET attempts = attempts + CASE WHEN p_count_attempt THEN 1 ELSE 0 END, worker = p_worker
    WHERE id = p_turn RETURNING attempts INTO result;
  RETURN result;
END $$;

-- One step inside a turn: an assistant message asking for tools (with its model call) or the
-- tool results.
CREATE FUNCTION herald_record_step(p_session uuid, p_token bigint, p_turn uuid, p_messages jsonb,
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

-- The end of a turn: the reply in the transcript and on every event the turn answered.
CREATE FUNCTION herald_finish_turn(p_session uuid, p_token bigint, p_turn uuid, p_events uuid[], p_reply text,
                                   p_failed boolean, p_error text, p_iterations integer,
                                   p_model_call jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  PERFORM herald_record_model_call(p_session, p_turn, p_model_call);
  PERFORM herald_append_messages(p_session, p_turn, jsonb_build_array(jsonb_build_object('role', 'assistant', 'content', p_reply)));
  UPDATE turns SET status = CASE WHEN p_failed THEN 'failed' ELSE 'done' END, iterations = p_iterations,
                   ended_at = clock_timestamp(), error = p_error
    WHERE id = p_turn;
  UPDATE inbound_events SET status = 'done', reply_text = p_reply, completed_at = clock_timestamp(), error = p_error
    WHERE id = ANY (p_events);
END $$;
