-- Herald's tables as of 2026-12-01: the squash of the numbered migrations 0001-0011 of the first
-- round. A database migrated by those files is recognised as being at this baseline (see
-- libs/db/src/migrate.ts). Tables, columns and indexes only: every SQL function lives in its own
-- file under migrations/functions/, applied before this file (bodies are checked at call time).

-- The spine: profiles, sessions and their routes, the inbox, the transcript, leases and turns.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE profiles (
  id text PRIMARY KEY,
  display_name text NOT NULL,
  identity text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Frozen-snapshot memory limits, in characters per store.
  memory_char_limit integer NOT NULL DEFAULT 2200,
  user_char_limit integer NOT NULL DEFAULT 1375,
  -- Chat types whose sessions everyone in the profile may search (e.g. '{group,channel}').
  -- Empty by default: a person searches only the sessions they started or wrote in.
  search_shared_chat_types text[] NOT NULL DEFAULT '{}',
  -- The profile's tool policy (see libs/tools/src/shared/tool-policy.ts): enabled/disabled toolsets, per
  -- platform and per person, and the profile's own toolsets.
  tool_policy jsonb NOT NULL DEFAULT '{}',
  -- How often a session is reviewed; 0 disables that kind of review for the profile.
  memory_review_interval integer NOT NULL DEFAULT 10 CHECK (memory_review_interval >= 0),
  skill_review_interval integer NOT NULL DEFAULT 10 CHECK (skill_review_interval >= 0)
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
  completed_at timestamptz,
  -- The platform's own id of the message: reply threading, and the anchor that lets an ambiguous
  -- Telegram send be reconciled.
  platform_message_id text NULL
);
CREATE INDEX inbound_events_open_idx ON inbound_events (session_id, received_at, id)
  WHERE status IN ('pending', 'processing');

CREATE TABLE turns (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id),
  -- waiting: parked on a person (an approval or an answer), holding no worker and no lease.
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'waiting', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 1,
  iterations integer NOT NULL DEFAULT 0,
  -- The lease owner that last ran the turn: which worker, for operators and tests.
  worker text,
  error text,
  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  ended_at timestamptz
);
CREATE INDEX turns_running_idx ON turns (session_id) WHERE status = 'running';
CREATE INDEX turns_waiting_idx ON turns (session_id) WHERE status = 'waiting';

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
  -- History search: the database keeps these current on every append, so no worker can forget.
  -- Tool names and tool-call arguments flattened to words (functions/herald_tool_text.sql).
  tool_text text GENERATED ALWAYS AS (herald_tool_text(tool_name, tool_calls)) STORED,
  -- English stemming ("deploying" finds "deployment"). A generated column cannot read another
  -- one, so it calls the function again; both run once per insert, never per query.
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('english'::regconfig, content || coalesce(' ' || herald_tool_text(tool_name, tool_calls), ''))
  ) STORED,
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

-- Frozen-snapshot memory: the agent's notes per profile (store 'memory') and one profile per
-- person (store 'user'); context documents per profile. Limits are characters per store.
CREATE TABLE memory_entries (
  id bigserial PRIMARY KEY,
  profile_id text NOT NULL REFERENCES profiles (id),
  store text NOT NULL CHECK (store IN ('memory', 'user')),
  -- '' for the profile's shared notes; the person's id for their user store.
  user_id text NOT NULL DEFAULT '',
  content text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX memory_entries_store_idx ON memory_entries (profile_id, store, user_id, id);

CREATE TABLE profile_documents (
  profile_id text NOT NULL REFERENCES profiles (id),
  name text NOT NULL,
  content text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (profile_id, name)
);

-- History search indexes.

CREATE INDEX messages_search_vector_idx ON messages USING gin (search_vector);

-- Substring search (CJK, short words, code fragments). Queries must spell this exact expression;
-- libs/search/src/history-search.ts keeps it in one constant.
CREATE INDEX messages_search_trgm_idx ON messages
  USING gin ((content || coalesce(' ' || tool_text, '')) gin_trgm_ops);

-- Scope lookups: a person's sessions in a profile, and the sessions they wrote in (group chats).
CREATE INDEX sessions_profile_user_idx ON sessions (profile_id, origin_user_id);
CREATE INDEX inbound_events_user_idx ON inbound_events (user_id, session_id);

-- Approvals and clarifying questions that suspend a turn, and the record of refused tool calls.

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

-- Platforms as adapters: the outbox (durable outbound delivery with receipts), leases for the
-- platform connections (one Telegram poller per bot token, one Discord gateway per shard), and the
-- platform's own id of an inbound message (reply threading, and the anchor that lets an ambiguous
-- Telegram send be reconciled). See docs/decisions/2026-11-30-outbox-delivery.md.

CREATE TABLE outbox (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- One logical message: 'reply:<turn_id>', 'command:<event_id>', 'cron:<run_id>'. Retries of the
  -- transport reuse the row, so a logical message is delivered at most once per key.
  idempotency_key text NOT NULL UNIQUE,
  platform text NOT NULL,
  target jsonb NOT NULL,
  -- Markdown; the sender converts and splits it for its platform.
  text text NOT NULL,
  session_id uuid NULL REFERENCES sessions (id) ON DELETE CASCADE,
  source text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text NULL,
  -- Platform message ids once delivered: {"messageIds": [...]}.
  receipt jsonb NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz NULL,
  -- The current claim: a 'sending' row whose claim expired was abandoned by a dead consumer.
  claim_token uuid NULL,
  claim_expires_at timestamptz NULL,
  -- Message ids of the parts already on the platform, in order: a retry resumes after them.
  parts_sent jsonb NOT NULL DEFAULT '[]',
  -- Written (committed) before each platform call and cleared with its result: a row found with it
  -- set after a crash or timeout is an ambiguous send, reconciled before anything is resent.
  -- {"part": n, "marker": "...", "anchor": "<last message id known in the chat>"}
  in_flight jsonb NULL
);
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at) WHERE status IN ('pending', 'sending');
CREATE INDEX outbox_session_idx ON outbox (session_id, created_at);
-- Per-chat order: the claim looks for an older open row of the same chat (or URL).
CREATE INDEX outbox_open_chat_idx ON outbox (platform, (target ->> 'chatId'), created_at)
  WHERE status IN ('pending', 'sending');
CREATE INDEX outbox_open_url_idx ON outbox (platform, (target ->> 'url'), created_at)
  WHERE status IN ('pending', 'sending');

-- Long-lived platform connections that must have exactly one holder cluster-wide.
CREATE TABLE platform_leases (
  name text PRIMARY KEY,
  owner text NOT NULL,
  token bigint NOT NULL,
  expires_at timestamptz NOT NULL
);

-- Skills (profile-scoped, every version kept) and background reviews of finished turns.

-- File contents by hash: a new version of a skill that changes one file stores one new blob.
CREATE TABLE skill_blobs (
  sha256 text PRIMARY KEY,
  content bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE skills (
  profile_id text NOT NULL REFERENCES profiles (id),
  name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9._-]*$' AND length(name) <= 64),
  version integer NOT NULL,
  description text NOT NULL,
  category text,
  tags text[] NOT NULL DEFAULT '{}',
  -- A pinned skill cannot be changed or deleted by a background review.
  pinned boolean NOT NULL DEFAULT false,
  -- 'session', 'review', 'person' or 'import': who created it (curation may treat them apart).
  created_by text NOT NULL,
  -- Deleted skills keep their versions; creating the name again continues the numbering.
  deleted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (profile_id, name)
);

CREATE TABLE skill_versions (
  profile_id text NOT NULL,
  name text NOT NULL,
  version integer NOT NULL,
  -- {"SKILL.md": "<sha256>", "references/x.md": "<sha256>", ...}; empty for a deletion.
  files jsonb NOT NULL,
  action text NOT NULL,
  -- 'session:<id>', 'review:<id>', 'api', 'cli' ...
  author text NOT NULL,
  note text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (profile_id, name, version),
  FOREIGN KEY (profile_id, name) REFERENCES skills (profile_id, name)
);

-- Per-session counters since the last review of each kind (Hermes' nudge counters), persisted so
-- that a session moving between workers keeps counting.
CREATE TABLE review_counters (
  session_id uuid PRIMARY KEY REFERENCES sessions (id),
  user_turns_since_memory integer NOT NULL DEFAULT 0,
  iterations_since_skill integer NOT NULL DEFAULT 0,
  -- The last turn counted: a completion recorded twice for one turn counts once.
  last_turn_id uuid,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- One row per completion event that triggered a review; UNIQUE(turn_id) makes a turn reviewed at
-- most once. The row is the review's state machine: pending -> running -> done | failed.
CREATE TABLE reviews (
  id uuid PRIMARY KEY,
  turn_id uuid NOT NULL UNIQUE,
  session_id uuid NOT NULL REFERENCES sessions (id),
  profile_id text NOT NULL REFERENCES profiles (id),
  user_id text NOT NULL,
  kinds text[] NOT NULL,
  user_turns integer NOT NULL,
  iterations integer NOT NULL,
  -- The exact JSON text of the tool definitions the session's model calls carried (text, not jsonb:
  -- jsonb reorders keys, and the bytes must match for the provider's prefix cache).
  tool_definitions text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  claim_token bigint,
  claimed_by text,
  claim_expires_at timestamptz,
  -- What the review saved: [{"tool": "memory", "action": "add", ...}]; empty when nothing.
  actions jsonb NOT NULL DEFAULT '[]',
  summary text,
  error text,
  input_tokens integer NOT NULL DEFAULT 0,
  cached_input_tokens integer NOT NULL DEFAULT 0,
  output_tokens integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX reviews_open_idx ON reviews (next_attempt_at) WHERE status IN ('pending', 'running');
CREATE INDEX reviews_session_idx ON reviews (session_id, created_at);
CREATE SEQUENCE review_claim_tokens;

-- Cron jobs and their runs (see docs/decisions/2026-11-30-cron-scheduler.md).

-- The scheduler's clock: the database clock plus an offset that is 0 in production. Every replica
-- reads the same clock, so replica clock skew cannot make two of them disagree about what is due;
-- tests move the offset forward instead of waiting for real minutes.
CREATE TABLE cron_clock (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  offset_ms bigint NOT NULL DEFAULT 0
);
INSERT INTO cron_clock DEFAULT VALUES;

CREATE TABLE cron_jobs (
  id uuid PRIMARY KEY,
  profile_id text NOT NULL REFERENCES profiles (id),
  creator_user_id text NOT NULL,
  name text NOT NULL,
  prompt text NOT NULL,
  -- As the person wrote it ("every 30m", "0 9 * * 1-5", "in 2h"), and as parsed.
  schedule text NOT NULL,
  schedule_kind text NOT NULL CHECK (schedule_kind IN ('cron', 'interval', 'once')),
  cron_expr text,
  interval_ms bigint,
  run_at timestamptz,
  timezone text NOT NULL DEFAULT 'UTC',
  session_mode text NOT NULL DEFAULT 'fresh' CHECK (session_mode IN ('fresh', 'named')),
  session_name text,
  skills jsonb NOT NULL DEFAULT '[]',
  toolsets jsonb NOT NULL DEFAULT '[]',
  -- Concrete targets: [{"platform": "telegram", "chatId": "..", "threadId": ".."}, {"platform": "webhook", "url": ".."}].
  targets jsonb NOT NULL DEFAULT '[]',
  -- The chat the job was created from; the owner is told there when the job is paused.
  origin jsonb,
  enabled boolean NOT NULL DEFAULT true,
  paused_reason text,
  missed_policy text NOT NULL DEFAULT 'run_once' CHECK (missed_policy IN ('skip', 'run_once')),
  consecutive_failures integer NOT NULL DEFAULT 0,
  -- NULL once a one-shot has fired: the job is completed.
  next_run_at timestamptz,
  last_run_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (session_mode = 'fresh' OR session_name IS NOT NULL)
);
CREATE INDEX cron_jobs_due_idx ON cron_jobs (next_run_at) WHERE enabled AND next_run_at IS NOT NULL;
CREATE INDEX cron_jobs_owner_idx ON cron_jobs (profile_id, creator_user_id, created_at);

-- One row per occurrence: the unique (job_id, scheduled_for) is what makes an occurrence fire once
-- however many scheduler replicas see it due.
CREATE TABLE cron_runs (
  id uuid PRIMARY KEY,
  job_id uuid NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
  scheduled_for timestamptz NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'missed', 'manual')),
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'running', 'succeeded', 'silent', 'failed', 'skipped')),
  session_id uuid REFERENCES sessions (id),
  event_id uuid REFERENCES inbound_events (id),
  output text,
  error text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at timestamptz,
  finished_at timestamptz,
  UNIQUE (job_id, scheduled_for)
);
CREATE INDEX cron_runs_open_idx ON cron_runs (status, created_at) WHERE status IN ('pending', 'running');
CREATE INDEX cron_runs_job_idx ON cron_runs (job_id, scheduled_for DESC);
