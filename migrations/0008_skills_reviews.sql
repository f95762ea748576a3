-- Skills (profile-scoped, every version kept) and background reviews of finished turns.

-- How often a session is reviewed; 0 disables that kind of review for the profile.
ALTER TABLE profiles
  ADD COLUMN memory_review_interval integer NOT NULL DEFAULT 10 CHECK (memory_review_interval >= 0),
  ADD COLUMN skill_review_interval integer NOT NULL DEFAULT 10 CHECK (skill_review_interval >= 0);

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
