-- Frozen-snapshot memory: the agent's notes per profile (store 'memory') and one profile per
-- person (store 'user'); context documents per profile. Limits are characters per store.
ALTER TABLE profiles
  ADD COLUMN memory_char_limit integer NOT NULL DEFAULT 2200,
  ADD COLUMN user_char_limit integer NOT NULL DEFAULT 1375;

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
