-- Toolsets per profile and platform, approvals and clarifying questions that suspend a turn, and
-- the record of refused tool calls.

-- The profile's tool policy (see libs/tools/src/tool-policy.ts): enabled/disabled toolsets, per
-- platform and per person, and the profile's own toolsets.
ALTER TABLE profiles ADD COLUMN tool_policy jsonb NOT NULL DEFAULT '{}';

-- A turn waiting for a person (an approval or an answer) holds no worker and no lease.
ALTER TABLE turns DROP CONSTRAINT turns_status_check;
ALTER TABLE turns ADD CONSTRAINT turns_status_check CHECK (status IN ('running', 'waiting', 'done', 'failed'));
CREATE INDEX turns_waiting_idx ON turns (session_id) WHERE status = 'waiting';

CREATE TABLE tool_waits (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  turn_id uuid NOT NULL REFERENCES turns (id),
  tool_call_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('approval', 'clarify')),
  tool_name text NOT NULL,
  arguments text NOT NULL,
  -- What "always allow for this session" remembers (approvals only).
  pattern_key text,
  -- The reason shown with an approval, or the question asked.
  prompt text NOT NULL,
  choices jsonb,
  -- Calls of the same step that had not started when the turn suspended: safe to run on resume.
  not_started text[] NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'approved', 'denied', 'answered', 'expired')),
  answer text,
  answered_by text,
  -- Set when the resumed turn takes the answer; after that a crash resumes with crash rules.
  consumed boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL,
  resolved_at timestamptz,
  UNIQUE (turn_id, tool_call_id)
);
CREATE INDEX tool_waits_pending_idx ON tool_waits (session_id, created_at) WHERE status = 'pending';
CREATE INDEX tool_waits_expiry_idx ON tool_waits (expires_at) WHERE status = 'pending';

-- "Always allow this pattern for this session".
CREATE TABLE session_approvals (
  session_id uuid NOT NULL REFERENCES sessions (id),
  pattern_key text NOT NULL,
  approved_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, pattern_key)
);

-- Every refused call: outside the permitted set, hardline commands, approvals in background runs.
CREATE TABLE tool_refusals (
  id bigserial PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  turn_id uuid,
  tool_name text NOT NULL,
  role text NOT NULL,
  user_id text NOT NULL,
  reason text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX tool_refusals_session_idx ON tool_refusals (session_id, created_at);

-- Suspends a turn on a wait: the calls answered so far were recorded by herald_record_step; the
-- wait row is written here with the turn's new status, under the lease.
CREATE FUNCTION herald_suspend_turn(p_session uuid, p_token bigint, p_turn uuid, p_wait jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  INSERT INTO tool_waits (id, session_id, turn_id, tool_call_id, kind, tool_name, arguments, pattern_key, prompt,
                          choices, not_started, expires_at)
  VALUES ((p_wait ->> 'id')::uuid, p_session, p_turn, p_wait ->> 'tool_call_id', p_wait ->> 'kind',
          p_wait ->> 'tool_name', p_wait ->> 'arguments', p_wait ->> 'pattern_key', p_wait ->> 'prompt',
          nullif(p_wait -> 'choices', 'null'::jsonb),
          ARRAY(SELECT jsonb_array_elements_text(p_wait -> 'not_started')),
          clock_timestamp() + ((p_wait ->> 'timeout_ms')::bigint * interval '1 millisecond'))
  ON CONFLICT (turn_id, tool_call_id) DO NOTHING;
  UPDATE turns SET status = 'waiting' WHERE id = p_turn;
END $$;

-- Answers a wait and makes its turn runnable again; the caller wakes the session. Returns the
-- session id, or NULL when the wait was not pending any more (answered twice, or expired).
CREATE FUNCTION herald_resolve_wait(p_wait uuid, p_status text, p_answer text, p_by text, p_remember boolean)
RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  w tool_waits%ROWTYPE;
BEGIN
  UPDATE tool_waits SET status = p_status, answer = p_answer, answered_by = p_by, resolved_at = clock_timestamp()
    WHERE id = p_wait AND status = 'pending'
    RETURNING * INTO w;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF p_remember AND p_status = 'approved' AND w.pattern_key IS NOT NULL THEN
    INSERT INTO session_approvals (session_id, pattern_key, approved_by) VALUES (w.session_id, w.pattern_key, p_by)
    ON CONFLICT DO NOTHING;
  END IF;
  UPDATE turns SET status = 'running' WHERE id = w.turn_id AND status = 'waiting';
  RETURN w.session_id;
END $$;

-- As in 0003, plus: when a question (clarify) is waiting in the session, the message is the answer.
-- It joins the parked turn, which becomes runnable again, all in the same round trip.
CREATE OR REPLACE FUNCTION herald_accept_message(p_event uuid, p_new_session uuid, p_key text, p_profile text, p_platform text,
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
  v_wait uuid;
  v_turn uuid;
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
    RETURN QUERY
      SELECT e.id, e.session_id, 'duplicate'::text, e.status, s.wake_generation, s.queue_mode
      FROM inbound_events e JOIN sessions s ON s.id = e.session_id WHERE e.dedupe_key = p_dedupe_key;
    RETURN;
  END IF;
  SELECT w.id, w.turn_id INTO v_wait, v_turn FROM tool_waits w
    WHERE w.session_id = v_session AND w.status = 'pending' AND w.kind = 'clarify'
    ORDER BY w.created_at LIMIT 1 FOR UPDATE;
  IF FOUND THEN
    PERFORM herald_resolve_wait(v_wait, 'answered', p_text, p_user_id, false);
    UPDATE inbound_events SET status = 'processing', turn_id = v_turn WHERE id = v_event;
    RETURN QUERY SELECT v_event, v_session, 'accepted'::text, 'processing'::text, v_generation, v_mode;
    RETURN;
  END IF;
  RETURN QUERY SELECT v_event, v_session, 'accepted'::text, 'pending'::text, v_generation, v_mode;
END $$;
