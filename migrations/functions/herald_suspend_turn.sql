-- Suspends a turn on a wait: the calls answered so far were recorded by herald_record_step; the
-- wait row is written here with the turn's new status, under the lease. A parked turn tells the
-- person in their chat: on a chat platform (p_chat_platforms, as herald_finish_turn takes it) the
-- question or the call to approve goes into the outbox in the same transaction that parks the turn.
CREATE OR REPLACE FUNCTION herald_suspend_turn(p_session uuid, p_token bigint, p_turn uuid, p_wait jsonb, p_notice text,
                                    p_buttons jsonb, p_chat_platforms text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  INSERT INTO tool_waits (id, session_id, turn_id, tool_call_id, kind, tool_name, arguments, pattern_key, prompt,
                          choices, not_started, expires_at)
  VALUES ((p_wait ->> 'id')::uuid, p_session, p_turn, p_wait ->> 'tool_call_id', p_wait ->> 'kind',
          p_wait ->> 'tool_name', p_wait ->> 'arguments', p_wait ->> 'pattern_key', p_wait ->> 'prompt',
          nullif(p_wait -> 'choices', 'null'::jsonb),
          ARRAY(SELECT jsonb_array_elements_text(p_wait -> 'not_started')),
          clock_timestamp() + ((p_wait ->> 'timeout_ms')::bigint * interval '1 millisecond'))
  ON CONFLICT (turn_id, tool_call_id) DO NOTHING;
  UPDATE turns SET status = 'waiting' WHERE id = p_turn;
  -- Parked on child runs: their ends lock this turn's row (herald_subagent_settle), which the update
  -- above holds now, so a child that ended before this commit is seen here and one that ends after
  -- sees this wait. Every child already done: the wait is answered at once.
  IF p_wait ->> 'kind' = 'subagents' AND NOT EXISTS (
       SELECT 1 FROM subagent_runs r WHERE r.wait_id = (p_wait ->> 'id')::uuid AND r.status IN ('queued', 'running')) THEN
    PERFORM herald_resolve_wait((p_wait ->> 'id')::uuid, 'answered', NULL, 'subagents', false);
  END IF;
  INSERT INTO outbox (idempotency_key, platform, target, text, session_id, source)
  SELECT 'wait:' || (p_wait ->> 'id'), s.platform,
         jsonb_strip_nulls(jsonb_build_object(
           'chatId', s.chat_id, 'chatType', s.chat_type, 'threadId', s.thread_id,
           'buttons', CASE WHEN p_buttons IS NULL THEN NULL ELSE p_buttons::text END)),
         p_notice, p_session, 'wait'
  FROM sessions s
  WHERE s.id = p_session AND s.platform = ANY (p_chat_platforms) AND p_notice IS NOT NULL
  ON CONFLICT (idempotency_key) DO NOTHING;
  IF FOUND THEN
    PERFORM pg_notify('herald_outbox', p_session::text);
  END IF;
END $$;
