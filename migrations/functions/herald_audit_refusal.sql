-- A message refused by a limit, in the audit trail (kind 'refusal'). Called by
-- herald_accept_message in the statement that refuses, so the refusal and its record are one
-- atomic write: a refusal stores nothing else (no event, no message), so this row is its only trace.
CREATE OR REPLACE FUNCTION herald_audit_refusal(p_user text, p_profile text, p_session uuid, p_limit text,
                                                p_retry_after integer, p_platform text, p_chat_id text)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO audit_log (kind, actor, profile_id, session_id, subject, detail)
  VALUES ('refusal', p_user, p_profile, p_session, 'limit:' || p_limit,
          jsonb_strip_nulls(jsonb_build_object('limit', p_limit, 'retry_after', p_retry_after, 'platform', p_platform,
                                               'chat_id', p_chat_id)));
$$;
