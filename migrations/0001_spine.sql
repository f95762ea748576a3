-- The spine: profiles, sessions and their routes, the inbox, the transcript, leases and turns.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE profiles (
  id text PRIMARY KEY,
  display_name text NOT NULL,
  identity text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO profiles (id, display_name) VALUES ('main', 'Herald');

CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  profile_id text NOT NULL REFERENCES profiles (id),
  session_key text NOT NULL,
  platform text NOT NULL,
  chat_type text NOT NULL,
  chat_id text NOT NULL,
  thread_id text,
  origin_user_id text,
  system_prompt text,
  queue_mode text NOT NULL DEFAULT 'followup'
    CHECK (queue_mode IN ('followup', 'collect', 'steer', 'interrupt')),
  -- Bumped by each worker that starts draining the session; names the next wake-up job so that a
  -- message arriving mid-drain always gets a job of its own (see docs/decisions).
  wake_generation bigint NOT NULL DEFAULT 0,
  parent_session_id uuid REFERENCES sessions (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_session_key_idx ON sessions (session_key, created_at);

CREATE TABLE session_routes (
  session_key text PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE inbound_events (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  -- platform event id or API idempotency key: a retried delivery is the same event.
  dedupe_key text UNIQUE,
  platform text NOT NULL,
  user_id text NOT NULL,
  user_name text,
  text text NOT NULL,
  kind text NOT NULL DEFAULT 'message' CHECK (kind IN ('message', 'command')),
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'processing', 'done', 'failed')),
  turn_id uuid,
  reply_text text,
  error text,
  received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  completed_at timestamptz
);
CREATE INDEX inbound_events_open_idx ON inbound_events (session_id, received_at, id)
  WHERE status IN ('pending', 'processing');

CREATE TABLE turns (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 1,
  iterations integer NOT NULL DEFAULT 0,
  -- The lease owner that last ran the turn: which worker, for operators and tests.
  worker text,
  error text,
  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  ended_at timestamptz
);
CREATE INDEX turns_running_idx ON turns (session_id) WHERE status = 'running';

CREATE TABLE messages (
  id bigserial PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  seq integer NOT NULL,
  turn_id uuid,
  role text NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
  content text NOT NULL DEFAULT '',
  tool_calls jsonb,
  tool_call_id text,
  tool_name text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (session_id, seq)
);

CREATE TABLE model_calls (
  id bigserial PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  turn_id uuid,
  provider text NOT NULL,
  model text NOT NULL,
  input_tokens integer NOT NULL DEFAULT 0,
  output_tokens integer NOT NULL DEFAULT 0,
  cached_input_tokens integer NOT NULL DEFAULT 0,
  cache_write_tokens integer NOT NULL DEFAULT 0,
  latency_ms integer NOT NULL,
  finish_reason text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX model_calls_session_idx ON model_calls (session_id, created_at);

CREATE TABLE session_leases (
  session_id uuid PRIMARY KEY REFERENCES sessions (id),
  owner text NOT NULL,
  token bigint NOT NULL,
  expires_at timestamptz NOT NULL,
  -- False while held, and after a holder died: a claim over an unreleased lease is a crash takeover.
  released boolean NOT NULL DEFAULT false
);

CREATE TABLE session_todos (
  session_id uuid PRIMARY KEY REFERENCES sessions (id),
  items jsonb NOT NULL DEFAULT '[]',
  revision integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
