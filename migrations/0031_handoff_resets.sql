-- Long conversations, part two (docs/long-chats.md): /handoff moves a session to a platform's home
-- chat (set with /sethome), reset policies end idle or day-old sessions, and every ending of a
-- session fires the on_session_end hook once.

-- A session ends for one of these reasons: compressed into a child, /new, a reset policy, or its
-- chat handed to another session by /handoff.
ALTER TABLE sessions DROP CONSTRAINT sessions_end_reason_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_end_reason_check
  CHECK (end_reason IN ('compression', 'new', 'reset', 'handoff'));

-- When the worker fired on_session_end for an ended session (once; see services/worker/src/session-lifecycle.ts).
-- Sessions ended before this migration count as fired: upgrading does not replay old endings.
ALTER TABLE sessions ADD COLUMN end_hooks_fired_at timestamptz;
UPDATE sessions SET end_hooks_fired_at = ended_at WHERE ended_at IS NOT NULL;
CREATE INDEX sessions_end_hooks_due_idx ON sessions (ended_at) WHERE ended_at IS NOT NULL AND end_hooks_fired_at IS NULL;

-- A profile's own reset rules (a JSON list, the shape of HERALD_SESSION_RESET), tried before the config's.
ALTER TABLE profiles ADD COLUMN session_reset jsonb NOT NULL DEFAULT '[]';

-- Each profile's home chat on each platform, set by /sethome in that chat: where /handoff sends a session.
CREATE TABLE home_chats (
  profile_id text NOT NULL REFERENCES profiles (id),
  platform text NOT NULL,
  chat_type text NOT NULL,
  chat_id text NOT NULL,
  thread_id text,
  set_by text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (profile_id, platform)
);

-- A request to move a session to a platform's home chat. A worker claims a pending request (SKIP
-- LOCKED, fenced by owner and attempt), rebinds the route in one transaction, and marks it done,
-- or failed with the reason (route and session untouched). A claim whose holder died is taken
-- over after a while. One open request per session at a time; a failed one is retried by asking again.
CREATE TABLE session_handoffs (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  platform text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
  reason text,
  requested_by text NOT NULL,
  owner text,
  attempt integer NOT NULL DEFAULT 0,
  target_chat_id text,
  requested_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  claimed_at timestamptz,
  finished_at timestamptz
);
CREATE UNIQUE INDEX session_handoffs_open_idx ON session_handoffs (session_id) WHERE status IN ('pending', 'running');
CREATE INDEX session_handoffs_due_idx ON session_handoffs (requested_at) WHERE status IN ('pending', 'running');
CREATE INDEX session_handoffs_session_idx ON session_handoffs (session_id, requested_at);
