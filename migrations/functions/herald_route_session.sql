-- The session a chat key points at, creating it (with p_new_session as its id) on first contact.
CREATE OR REPLACE FUNCTION herald_route_session(p_key text, p_new_session uuid, p_profile text, p_platform text,
                                     p_chat_type text, p_chat_id text, p_thread_id text, p_user_id text)
RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  v_session uuid;
BEGIN
  SELECT session_id INTO v_session FROM session_routes WHERE session_key = p_key;
  IF FOUND THEN
    RETURN v_session;
  END IF;
  INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, thread_id, origin_user_id)
  VALUES (p_new_session, p_profile, p_key, p_platform, p_chat_type, p_chat_id, p_thread_id, p_user_id);
  INSERT INTO session_routes (session_key, session_id) VALUES (p_key, p_new_session)
  ON CONFLICT (session_key) DO NOTHING
  RETURNING session_id INTO v_session;
  IF v_session IS NULL THEN
    -- A concurrent first message for the same chat won; use its session and drop ours.
    DELETE FROM sessions WHERE id = p_new_session;
    SELECT session_id INTO v_session FROM session_routes WHERE session_key = p_key;
  END IF;
  RETURN v_session;
END $$;
