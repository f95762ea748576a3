-- The end of a turn and the start of what follows, in one round trip: herald_finish_turn, then the
-- session's inbox as herald_open_inbox reads it (releasing the lease when nothing is left). With
-- tracing on, p_trace_parent is the turn's traceparent: the reply's outbox row takes it (the
-- column's default reads this transaction-local setting), so its delivery joins the same trace.
CREATE OR REPLACE FUNCTION herald_finish_turn_next(p_session uuid, p_token bigint, p_turn uuid, p_events uuid[], p_reply text,
                                                   p_failed boolean, p_error text, p_iterations integer,
                                                   p_model_call jsonb, p_trace_parent text, p_limit integer)
-- The columns are herald_open_inbox's (a difference fails the RETURN QUERY at once).
RETURNS TABLE (queue_mode text, parked boolean, id uuid, text text, user_id text, user_name text, status text,
               turn_id uuid, released boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  IF p_trace_parent IS NOT NULL THEN
    PERFORM set_config('herald.trace_parent', p_trace_parent, true);
  END IF;
  PERFORM herald_finish_turn(p_session, p_token, p_turn, p_events, p_reply, p_failed, p_error, p_iterations, p_model_call);
  RETURN QUERY SELECT * FROM herald_open_inbox(p_session, p_token, p_limit);
END $$;
