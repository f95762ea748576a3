-- One model call's usage, for the session's cost and the provider cache figures, and for the daily
-- token limit: the tokens count for the person whose message the turn answers (its first event's).
-- plpgsql, not sql: a multi-statement sql function is planned again on every call, and this one runs
-- in every turn's finish; plpgsql keeps its plans for the connection.
CREATE OR REPLACE FUNCTION herald_record_model_call(p_session uuid, p_turn uuid, p_call jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF p_call IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO model_calls (session_id, turn_id, provider, model, input_tokens, output_tokens,
                           cached_input_tokens, cache_write_tokens, latency_ms, finish_reason, key_name)
  SELECT p_session, p_turn, p_call ->> 'provider', p_call ->> 'model', (p_call ->> 'input_tokens')::integer,
         (p_call ->> 'output_tokens')::integer, (p_call ->> 'cached_input_tokens')::integer,
         (p_call ->> 'cache_write_tokens')::integer, (p_call ->> 'latency_ms')::integer, p_call ->> 'finish_reason',
         p_call ->> 'key_name';
  INSERT INTO usage_days (day, user_id, tokens)
  SELECT (clock_timestamp() AT TIME ZONE 'UTC')::date, e.user_id,
         coalesce((p_call ->> 'input_tokens')::bigint, 0) + coalesce((p_call ->> 'output_tokens')::bigint, 0)
  FROM (SELECT user_id FROM inbound_events WHERE turn_id = p_turn ORDER BY received_at, id LIMIT 1) e
  ON CONFLICT (day, user_id) DO UPDATE SET tokens = usage_days.tokens + EXCLUDED.tokens;
END $$;
