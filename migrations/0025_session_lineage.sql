-- Long conversations (docs/long-chats.md): a session that outgrows the model's window ends with
-- end_reason 'compression' and a child session (parent_session_id) carries on with a compacted
-- history. /new ends the old session with 'new'.
ALTER TABLE sessions
  ADD COLUMN title text,
  ADD COLUMN ended_at timestamptz,
  ADD COLUMN end_reason text CHECK (end_reason IN ('compression', 'new')),
  -- Compressions in a row that left the prompt over the threshold (Hermes' anti-thrash); from two
  -- on, only /compress compresses. Carried into the child.
  ADD COLUMN ineffective_compressions integer NOT NULL DEFAULT 0,
  -- Notices about compression the person has been given in this lineage, each given once.
  ADD COLUMN compression_notices text[] NOT NULL DEFAULT '{}';
CREATE INDEX sessions_parent_idx ON sessions (parent_session_id) WHERE parent_session_id IS NOT NULL;

-- One compression per session at a time: the claim is fenced by the session lease token, so a
-- worker that lost its lease (or died mid-summary) cannot commit a child, and the next holder of
-- the lease takes the claim over. A finished compression leaves its row as the record.
CREATE TABLE session_compressions (
  session_id uuid PRIMARY KEY REFERENCES sessions (id),
  owner text NOT NULL,
  lease_token bigint NOT NULL,
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'unchanged')),
  trigger text NOT NULL CHECK (trigger IN ('estimate', 'overflow', 'command', 'messages')),
  child_session_id uuid REFERENCES sessions (id),
  messages_before integer,
  messages_after integer,
  tokens_before integer,
  tokens_after integer,
  summarised integer,
  fallback boolean,
  error text,
  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  finished_at timestamptz
);
