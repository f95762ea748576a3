-- What herald_accept_message answers for a message whose dedupe key it has seen: the earlier event
-- ('duplicate'), unless the sender may only use their own chats and that event was somebody else's
-- ('not_owner': nothing of it is returned to them).
CREATE OR REPLACE FUNCTION herald_duplicate_outcome(p_own_chat boolean, p_event_user text, p_user_id text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_own_chat AND p_event_user IS DISTINCT FROM p_user_id THEN 'not_owner' ELSE 'duplicate' END
$$;
