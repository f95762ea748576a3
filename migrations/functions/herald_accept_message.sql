-- Routes and accepts an inbound message in one round trip (see libs/inbox/src/inbox.ts for the
-- invariants): the event is committed, deduplicated on its platform id, and refused past the
-- session's backlog or past a limit (herald_check_limits, then the money budgets of herald_budget_status; outcome 'limited' with the limit's name
-- and the seconds to wait; herald_audit_refusal records it in the audit trail in this same call).
-- When a question (clarify) is waiting in the session and this person may answer it
-- (herald_may_answer_wait: whoever's turn asked, or an operator), the message is the answer: it
-- joins the parked turn, which becomes runnable again, all in the same round trip. Anyone else's
-- message waits behind the parked turn like any other.
-- With p_own_chat (a person's API chat), a session somebody else started is refused (outcome
-- 'not_owner', nothing written): checked under the session row lock, so two people naming the same
-- new chat at once cannot both pass the ingress's check and end up in one session.
CREATE OR REPLACE FUNCTION herald_accept_message(p_event uuid, p_new_session uuid, p_key text, p_profile text, p_platform text,
                                      p_chat_type text, p_chat_id text, p_thread_id text, p_user_id text,
                                      p_user_name text, p_text text, p_dedupe_key text, p_backlog integer,
                                      p_operators text[], p_limits jsonb, p_own_chat boolean DEFAULT false)
RETURNS TABLE (event_id uuid, session_id uuid, outcome text, status text, wake_generation bigint, queue_mode text,
               limit_name text, retry_after integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_session uuid;
  v_generation bigint;
  v_mode text;
  v_open bigint;
  v_event uuid;
  v_wait uuid;
  v_turn uuid;
  v_ended timestamptz;
  v_origin text;
  v_try integer;
  v_limit text;
  v_retry integer;
BEGIN
  -- A repeated request is answered with its event, but never someone else's (p_own_chat): a person
  -- who names another's chat and idempotency key learns nothing from it.
  IF p_dedupe_key IS NOT NULL THEN
    RETURN QUERY
      SELECT e.id, e.session_id, herald_duplicate_outcome(p_own_chat, e.user_id, p_user_id), e.status, s.wake_generation, s.queue_mode, NULL::text, NULL::integer
      FROM inbound_events e JOIN sessions s ON s.id = e.session_id WHERE e.dedupe_key = p_dedupe_key;
    IF FOUND THEN
      RETURN;
    END IF;
  END IF;
  -- The route is read without a lock; the session row lock below waits for a compression (or
  -- /new) that is moving the chat. A session found ended after that wait is not the chat's any
  -- more: route again, so the message queues in the child (or the new session), never the old one.
  FOR v_try IN 1..5 LOOP
    v_session := herald_route_session(p_key, p_new_session, p_profile, p_platform, p_chat_type, p_chat_id,
                                      p_thread_id, p_user_id);
    UPDATE sessions SET updated_at = now() WHERE id = v_session
      RETURNING sessions.wake_generation, sessions.queue_mode, sessions.ended_at, sessions.origin_user_id
      INTO v_generation, v_mode, v_ended, v_origin;
    EXIT WHEN v_ended IS NULL;
  END LOOP;
  IF p_own_chat AND v_origin IS DISTINCT FROM p_user_id THEN
    RETURN QUERY SELECT NULL::uuid, v_session, 'not_owner'::text, NULL::text, v_generation, v_mode, NULL::text, NULL::integer;
    RETURN;
  END IF;
  SELECT count(*) INTO v_open FROM inbound_events e
    WHERE e.session_id = v_session AND e.status IN ('pending', 'processing');
  IF v_open >= p_backlog THEN
    PERFORM herald_audit_refusal(p_user_id, p_profile, v_session, 'session_backlog', NULL, p_platform, p_chat_id);
    RETURN QUERY SELECT NULL::uuid, v_session, 'backlog_full'::text, NULL::text, v_generation, v_mode, NULL::text, NULL::integer;
    RETURN;
  END IF;
  SELECT w.id, w.turn_id INTO v_wait, v_turn FROM tool_waits w
    WHERE w.session_id = v_session AND w.status = 'pending' AND w.kind = 'clarify'
      AND herald_may_answer_wait(w.id, p_user_id, p_operators)
    ORDER BY w.created_at LIMIT 1 FOR UPDATE;
  -- An answer to the person's own question is never limited: its turn is already in flight.
  IF v_wait IS NULL THEN
    SELECT l.limit_name, l.retry_after INTO v_limit, v_retry FROM herald_check_limits(p_user_id, p_limits) l;
    -- Money budgets (herald_budget_status): named budget:<scope>:<period>, the longest wait first.
    -- No p_limits at all (a scheduled run firing) is not limited, budgets included.
    IF v_limit IS NULL AND p_limits IS NOT NULL THEN
      SELECT 'budget:' || b.scope || ':' || b.period, b.retry_after INTO v_limit, v_retry
        FROM herald_budget_status(p_user_id, p_profile, p_limits -> 'budgets') b
        WHERE b.spent >= b.budget ORDER BY b.retry_after DESC, b.period DESC LIMIT 1;
    END IF;
    IF v_limit IS NOT NULL THEN
      PERFORM herald_audit_refusal(p_user_id, p_profile, v_session, v_limit, v_retry, p_platform, p_chat_id);
      RETURN QUERY SELECT NULL::uuid, v_session, 'limited'::text, NULL::text, v_generation, v_mode, v_limit, v_retry;
      RETURN;
    END IF;
  END IF;
  INSERT INTO inbound_events (id, session_id, dedupe_key, platform, user_id, user_name, text)
  VALUES (p_event, v_session, p_dedupe_key, p_platform, p_user_id, p_user_name, p_text)
  ON CONFLICT (dedupe_key) DO NOTHING
  RETURNING id INTO v_event;
  IF v_event IS NULL THEN
    RETURN QUERY
      SELECT e.id, e.session_id, herald_duplicate_outcome(p_own_chat, e.user_id, p_user_id), e.status, s.wake_generation, s.queue_mode, NULL::text, NULL::integer
      FROM inbound_events e JOIN sessions s ON s.id = e.session_id WHERE e.dedupe_key = p_dedupe_key;
    RETURN;
  END IF;
  IF v_wait IS NOT NULL THEN
    PERFORM herald_resolve_wait(v_wait, 'answered', p_text, p_user_id, false);
    UPDATE inbound_events SET status = 'processing', turn_id = v_turn WHERE id = v_event;
    RETURN QUERY SELECT v_event, v_session, 'accepted'::text, 'processing'::text, v_generation, v_mode, NULL::text, NULL::integer;
    RETURN;
  END IF;
  RETURN QUERY SELECT v_event, v_session, 'accepted'::text, 'pending'::text, v_generation, v_mode, NULL::text, NULL::integer;
END $$;
