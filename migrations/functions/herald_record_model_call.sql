-- One model call's usage, for the session's cost and the provider cache figures, and for the daily
-- token limit and the money budgets: the tokens and the cost count for the person whose message the
-- turn answers (its first event's) and for the session's profile. The cost comes priced from the
-- caller's price table (cost_usd, price_known); usage_costs sums it per identity, profile and day.
-- A turn's own calls come from its steps and its finish (kind 'turn'). A background review's calls
-- ('review') come with the turn they review, so they count for that turn's person; a compression's
-- summary ('compression') says whom it counts for in `user_id` when no turn has started yet (the
-- first event's author, as for a turn). Every kind counts the same for limits and budgets.
-- plpgsql, not sql: a multi-statement sql function is planned again on every call, and this one runs
-- in every turn's finish; plpgsql keeps its plans for the connection.
CREATE OR REPLACE FUNCTION herald_record_model_call(p_session uuid, p_turn uuid, p_call jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_user text;
  v_profile text;
  v_cost numeric := coalesce((p_call ->> 'cost_usd')::numeric, 0);
  v_day date := (clock_timestamp() AT TIME ZONE 'UTC')::date;
BEGIN
  IF p_call IS NULL THEN
    RETURN;
  END IF;
  IF p_call ? 'user_id' THEN
    v_user := nullif(p_call ->> 'user_id', '');
  ELSE
    SELECT e.user_id INTO v_user FROM inbound_events e WHERE e.turn_id = p_turn ORDER BY e.received_at, e.id LIMIT 1;
  END IF;
  SELECT s.profile_id INTO v_profile FROM sessions s WHERE s.id = p_session;
  INSERT INTO model_calls (session_id, turn_id, kind, provider, model, input_tokens, output_tokens,
                           cached_input_tokens, cache_write_tokens, latency_ms, finish_reason, key_name,
                           user_id, profile_id, cost_usd, price_known)
  SELECT p_session, p_turn, coalesce(p_call ->> 'kind', 'turn'), p_call ->> 'provider', p_call ->> 'model',
         (p_call ->> 'input_tokens')::integer, (p_call ->> 'output_tokens')::integer, (p_call ->> 'cached_input_tokens')::integer,
         (p_call ->> 'cache_write_tokens')::integer, (p_call ->> 'latency_ms')::integer, p_call ->> 'finish_reason',
         p_call ->> 'key_name', v_user, v_profile, v_cost, coalesce((p_call ->> 'price_known')::boolean, false);
  IF v_user IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO usage_days (day, user_id, tokens)
  VALUES (v_day, v_user, coalesce((p_call ->> 'input_tokens')::bigint, 0) + coalesce((p_call ->> 'output_tokens')::bigint, 0))
  ON CONFLICT (day, user_id) DO UPDATE SET tokens = usage_days.tokens + EXCLUDED.tokens;
  INSERT INTO usage_costs (day, user_id, profile_id, cost_usd)
  VALUES (v_day, v_user, coalesce(v_profile, ''), v_cost)
  ON CONFLICT (day, user_id, profile_id) DO UPDATE SET cost_usd = usage_costs.cost_usd + EXCLUDED.cost_usd;
END $$;
