-- The end of a turn and the start of what follows, in one round trip: herald_finish_turn, the turn's
-- completion event (herald_record_completion without the tool definitions: when a review is due,
-- review_due says so and nothing is recorded, and the worker records it again in a transaction with
-- the review's job; p_completion_profile NULL skips it), then the session's inbox as
-- herald_open_inbox reads it (releasing the lease when nothing is left). With
-- tracing on, p_trace_parent is the turn's traceparent: the reply's outbox row takes it (the
-- column's default reads this transaction-local setting), so its delivery joins the same trace.
CREATE OR REPLACE FUNCTION herald_finish_turn_next(p_session uuid, p_token bigint, p_turn uuid, p_events uuid[], p_reply text,
                                                   p_failed boolean, p_error text, p_iterations integer,
                                                   p_model_call jsonb, p_trace_parent text, p_limit integer,
                                                   p_completion_profile text, p_completion_user text,
                                                   p_interrupted boolean, p_errored boolean, p_scheduled boolean,
                                                   p_chat_platforms text[])
-- The columns are herald_open_inbox's and review_due (a difference fails the RETURN QUERY at once).
RETURNS TABLE (queue_mode text, parked boolean, id uuid, text text, user_id text, user_name text, status text,
               turn_id uuid, released boolean, review_due boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_due boolean := false;
BEGIN
  IF p_trace_parent IS NOT NULL THEN
    PERFORM set_config('herald.trace_parent', p_trace_parent, true);
  END IF;
  PERFORM herald_finish_turn(p_session, p_token, p_turn, p_events, p_reply, p_failed, p_error, p_iterations, p_model_call, p_chat_platforms);
  IF p_completion_profile IS NOT NULL THEN
    -- A review never breaks a reply: if recording the counts fails, the reply still commits and
    -- review_due is NULL (the worker logs that this turn's counts are lost).
    BEGIN
      SELECT c.review_id IS NULL AND cardinality(c.kinds) > 0 INTO v_due
        FROM herald_record_completion(p_turn, p_session, p_completion_profile, p_completion_user, 1, p_iterations,
                                      p_interrupted, p_errored, p_scheduled, NULL) c;
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'turn % completion not recorded: %', p_turn, SQLERRM;
      v_due := NULL;
    END;
  END IF;
  RETURN QUERY SELECT i.*, v_due FROM herald_open_inbox(p_session, p_token, p_limit) i;
END $$;
