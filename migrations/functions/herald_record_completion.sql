-- A turn's completion event in one round trip (it runs on the worker after every reply, before the
-- session's next turn): the counters, the trigger decision and the review row, as
-- libs/knowledge/src/review-store.ts describes. Whether the turn saved a memory or changed a skill
-- is read from the turn's own tool results (all of its runs, a resumed turn's too), by
-- herald_tool_succeeded, through the session's index rather than a scan of all messages. The
-- trigger rule lives here only: a review kind fires when its count reaches the profile's interval,
-- and an interval of 0 disables it. A review row is always written with its definitions: a call
-- without them (p_definitions NULL) only records a turn that fires nothing.
CREATE OR REPLACE FUNCTION herald_record_completion(p_turn uuid, p_session uuid, p_profile text, p_user text, p_user_turns integer,
                                         p_iterations integer, p_interrupted boolean, p_errored boolean, p_scheduled boolean,
                                         p_definitions text)
RETURNS TABLE (review_id uuid, kinds text[], user_turns_since_memory integer, iterations_since_skill integer)
LANGUAGE plpgsql AS $$
DECLARE
  c review_counters%ROWTYPE;
  v_memory_used boolean;
  v_skill_used boolean;
  v_memory integer;
  v_skill integer;
  v_memory_interval integer;
  v_skill_interval integer;
  v_kinds text[] := '{}';
  v_review uuid;
BEGIN
  INSERT INTO review_counters (session_id) VALUES (p_session) ON CONFLICT (session_id) DO NOTHING;
  SELECT * INTO c FROM review_counters WHERE session_id = p_session FOR UPDATE;
  IF c.last_turn_id = p_turn THEN
    RETURN QUERY SELECT NULL::uuid, '{}'::text[], c.user_turns_since_memory, c.iterations_since_skill;
    RETURN;
  END IF;
  SELECT coalesce(bool_or(m.tool_name = 'memory'), false), coalesce(bool_or(m.tool_name = 'skill_manage'), false)
    INTO v_memory_used, v_skill_used
    FROM messages m
    WHERE m.session_id = p_session AND m.turn_id = p_turn AND m.role = 'tool'
      AND m.tool_name IN ('memory', 'skill_manage') AND herald_tool_succeeded(m.content);
  -- A profile that does not exist has no intervals: nothing fires (a review row needs the profile).
  SELECT p.memory_review_interval, p.skill_review_interval
    INTO v_memory_interval, v_skill_interval FROM profiles p WHERE p.id = p_profile;
  v_memory := CASE WHEN v_memory_used THEN 0 ELSE c.user_turns_since_memory + p_user_turns END;
  v_skill := CASE WHEN v_skill_used THEN 0 ELSE c.iterations_since_skill + p_iterations END;
  IF NOT p_interrupted AND NOT p_errored AND NOT p_scheduled THEN
    IF v_memory_interval > 0 AND v_memory >= v_memory_interval THEN v_kinds := v_kinds || 'memory'::text; END IF;
    IF v_skill_interval > 0 AND v_skill >= v_skill_interval THEN v_kinds := v_kinds || 'skill'::text; END IF;
  END IF;
  -- Without the definitions the caller could not send the review's job in this transaction (it
  -- calls outside one, to save the BEGIN and COMMIT of the common turn that fires nothing): a due
  -- review records nothing and says which kinds are due, and the caller comes back in a transaction.
  IF cardinality(v_kinds) > 0 AND p_definitions IS NULL THEN
    RETURN QUERY SELECT NULL::uuid, v_kinds, c.user_turns_since_memory, c.iterations_since_skill;
    RETURN;
  END IF;
  IF cardinality(v_kinds) > 0 THEN
    INSERT INTO reviews (id, turn_id, session_id, profile_id, user_id, kinds, user_turns, iterations, tool_definitions)
    VALUES (gen_random_uuid(), p_turn, p_session, p_profile, p_user, v_kinds, v_memory, v_skill, p_definitions)
    ON CONFLICT (turn_id) DO NOTHING
    RETURNING id INTO v_review;
    IF 'memory' = ANY (v_kinds) THEN v_memory := 0; END IF;
    IF 'skill' = ANY (v_kinds) THEN v_skill := 0; END IF;
  END IF;
  UPDATE review_counters SET user_turns_since_memory = v_memory, iterations_since_skill = v_skill,
                             last_turn_id = p_turn, updated_at = clock_timestamp()
    WHERE session_id = p_session;
  RETURN QUERY SELECT v_review, CASE WHEN v_review IS NULL THEN '{}'::text[] ELSE v_kinds END, v_memory, v_skill;
END $$;
