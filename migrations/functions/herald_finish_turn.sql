-- Ends a turn under the lease: its last model call, the assistant reply, the turn and its events.
-- When the session is routed to a chat platform, the reply goes into the outbox in the same
-- transaction as the assistant message, so a committed reply is never lost before it is sent. The
-- API platform reads replies from the event and gets no outbox row. Which platforms have chats is
-- data, p_chat_platforms (the registry's CHAT_PLATFORMS, libs/core/src/platform-registry.ts); the
-- chat is the session's where it is now, at the end of the turn (a handoff during the turn moves
-- the answer to the home chat), in the stored target form of libs/core/src/delivery-target.ts.
CREATE OR REPLACE FUNCTION herald_finish_turn(p_session uuid, p_token bigint, p_turn uuid, p_events uuid[], p_reply text,
                                              p_failed boolean, p_error text, p_iterations integer,
                                              p_model_call jsonb, p_chat_platforms text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_event uuid;
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  PERFORM herald_record_model_call(p_session, p_turn, p_model_call);
  PERFORM herald_append_messages(p_session, p_turn, jsonb_build_array(jsonb_build_object('role', 'assistant', 'content', p_reply)));
  UPDATE turns SET status = CASE WHEN p_failed THEN 'failed' ELSE 'done' END, iterations = p_iterations,
                   ended_at = clock_timestamp(), error = p_error
    WHERE id = p_turn;
  -- One event at a time, as herald_start_turn marks them: by one id the connection keeps the plan.
  FOREACH v_event IN ARRAY coalesce(p_events, '{}') LOOP
    UPDATE inbound_events SET status = 'done', reply_text = p_reply, completed_at = clock_timestamp(), error = p_error
      WHERE id = v_event;
  END LOOP;
  INSERT INTO outbox (idempotency_key, platform, target, text, session_id, source)
  SELECT 'reply:' || p_turn, s.platform,
         jsonb_strip_nulls(jsonb_build_object(
           'chatId', s.chat_id, 'chatType', s.chat_type, 'threadId', s.thread_id,
           'replyTo', (SELECT e.platform_message_id FROM inbound_events e
                       WHERE e.id = ANY (p_events) AND e.platform_message_id IS NOT NULL
                       ORDER BY e.received_at DESC LIMIT 1))),
         p_reply, p_session, 'reply'
  FROM sessions s
  WHERE s.id = p_session AND s.platform = ANY (p_chat_platforms) AND btrim(p_reply) <> ''
  ON CONFLICT (idempotency_key) DO NOTHING;
  IF FOUND THEN
    PERFORM pg_notify('herald_outbox', p_session::text);
  END IF;
END $$;
