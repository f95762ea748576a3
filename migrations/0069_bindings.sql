-- Bindings route inbound traffic to profiles (issue 31 point 5, docs/configuration.md#bindings):
-- an ordered list of rules, each matching any of platform, account, chat, Discord server (guild),
-- channel, chat type and person, and naming a profile. The most specific match wins, ties go to
-- the earlier rule (libs/profiles/src/binding-rules.ts). `position` is the rule's index in the list
-- PUT /v1/bindings replaces as a whole. A profile with bindings cannot be deleted, and a binding
-- cannot name a profile that does not exist.
CREATE TABLE bindings (
  position integer PRIMARY KEY CHECK (position >= 0),
  platform text,
  account text,
  chat_id text,
  guild_id text,
  channel_id text,
  chat_type text,
  user_id text,
  profile_id text NOT NULL REFERENCES profiles (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bindings_profile_idx ON bindings (profile_id);

-- Every ingress caches the list with the profiles (libs/db/src/profile-cache.ts): a change of it, by
-- the API, the CLI or psql, tells them all when it commits ('' drops every cached copy).
CREATE TRIGGER bindings_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON bindings
  FOR EACH STATEMENT EXECUTE FUNCTION herald_profile_changed('profile_id');
