-- One model call's usage, for the session's cost and the provider cache figures.
CREATE OR REPLACE FUNCTION herald_record_model_call(p_session uuid, p_turn uuid, p_call jsonb) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO model_calls (session_id, turn_id, provider, model, input_tokens, output_tokens,
                           cached_input_tokens, cache_write_tokens, latency_ms, finish_reason)
  SELECT p_session, p_turn, p_call ->> 'provider', p_call ->> 'model', (p_call ->> 'input_tokens')::integer,
         (p_call ->> 'output_tokens')::integer, (p_call ->> 'cached_input_tokens')::integer,
         (p_call ->> 'cache_write_tokens')::integer, (p_call ->> 'latency_ms')::integer, p_call ->> 'finish_reason'
  WHERE p_call IS NOT NULL;
$$;
