-- Routing and accepting an inbound message in one round trip (see inbox.ts for the invariants).

-- The session a chat key points at, creating it (with p_new_session as its id) on first contact.
CREATE FUNCTION herald_route_session(p_key text, p_new_session uuid, p_profile text, p_platform text,
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

-- Commits a message to its session's inbox under the session row lock, unless it is a duplicate
-- (same dedupe key) or the session's backlog is full. The caller enqueues the wake-up afterwards.
CREATE FUNCTION herald_accept_message(p_event uuid, p_new_session uuid, p_key text, p_profile text, p_platform text,
                                      p_chat_type text, p_chat_id text, p_thread_id text, p_user_id text,
                                      p_user_name text, p_text text, p_dedupe_key text, p_backlog integer)
RETURNS TABLE (event_id uuid, session_id uuid, outcome text, status text, wake_generation bigint, queue_mode text)
LANGUAGE plpgsql AS $$
DECLARE
  v_session uuid;
  v_generation bigint;
  v_mode text;
  v_open bigint;
  v_event uuid;
BEGIN
  IF p_dedupe_key IS NOT NULL THEN
    RETURN QUERY
      SELECT e.id, e.session_id, 'duplicate'::text, e.status, s.wake_generation, s.queue_mode
      FROM inbound_events e JOIN sessions s ON s.id = e.session_id WHERE e.dedupe_key = p_dedupe_key;
    IF FOUND THEN
      RETURN;
    END IF;
  END IF;
  v_session := herald_route_session(p_key, p_new_session, p_profile, p_platform, p_chat_type, p_chat_id,
                                    p_thread_id, p_user_id);
  UPDATE sessions SET updated_at = now() WHERE id = v_session
    RETURNING sessions.wake_generation, sessions.queue_mode INTO v_generation, v_mode;
  SELECT count(*) INTO v_open FROM inbound_events e
    WHERE e.session_id = v_session AND e.status IN ('pending', 'processing');
  IF v_open >= p_backlog THEN
    RETURN QUERY SELECT NULL::uuid, v_session, 'backlog_full'::text, NULL::text, v_generation, v_mode;
    RETURN;
  END IF;
  INSERT INTO inbound_events (id, session_id, dedupe_key, platform, user_id, user_name, text)
  VALUES (p_event, v_session, p_dedupe_key, p_platform, p_user_id, p_user_name, p_text)
  ON CONFLICT (dedupe_key) DO NOTHING
  RETURNING id INTO v_event;
  IF v_event IS NULL THEN
    -- The same dedupe key committed concurrently; that event holds the truth.
    RETURN QUERY
      SELECT e.id, e.session_id, 'duplicate'::text, e.status, s.wake_generation, s.queue_mode
      FROM inbound_events e JOIN sessions s ON s.id = e.session_id WHERE e.dedupe_key = p_dedupe_key;
    RETURN;
  END IF;
  RETURN QUERY SELECT v_event, v_session, 'accepted'::text, 'pending'::text, v_generation, v_mode;
END $$;
