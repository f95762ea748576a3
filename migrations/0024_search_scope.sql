-- History search inside the person's scope (docs/search.md, docs/decisions/2026-12-02-search-scope.md).
-- Every message carries its session's profile, owner (sessions.origin_user_id, whatever form user
-- ids take) and platform, copied by herald_message_scope on insert. The search indexes start with
-- the owner, so a search reads only that person's postings, and a btree walks a person's messages
-- newest first for the bounded candidate set.
CREATE EXTENSION IF NOT EXISTS btree_gin;

ALTER TABLE messages
  ADD COLUMN profile_id text,
  ADD COLUMN owner_id text,
  ADD COLUMN platform text;

UPDATE messages m
   SET profile_id = s.profile_id, owner_id = s.origin_user_id, platform = s.platform
  FROM sessions s
 WHERE s.id = m.session_id;

-- Nothing inserts without a session (the foreign key), so the profile and platform are always known.
ALTER TABLE messages
  ALTER COLUMN profile_id SET NOT NULL,
  ALTER COLUMN platform SET NOT NULL;

CREATE TRIGGER messages_scope BEFORE INSERT ON messages
  FOR EACH ROW EXECUTE FUNCTION herald_message_scope();

CREATE TRIGGER sessions_scope_moved AFTER UPDATE OF profile_id, origin_user_id, platform ON sessions
  FOR EACH ROW
  WHEN (OLD.profile_id IS DISTINCT FROM NEW.profile_id
        OR OLD.origin_user_id IS DISTINCT FROM NEW.origin_user_id
        OR OLD.platform IS DISTINCT FROM NEW.platform)
  EXECUTE FUNCTION herald_session_scope_moved();

-- The global indexes read every person's matches; these replace them. session_id is a column of
-- both so the sessions a person sees without owning them (group chats they wrote in, shared chat
-- types) are found in the same indexes. The trigram expression is spelled as SEARCH_TEXT in
-- libs/search/src/search-plan.ts.
DROP INDEX messages_search_vector_idx;
DROP INDEX messages_search_trgm_idx;
CREATE INDEX messages_scope_vector_idx ON messages USING gin (owner_id, session_id, search_vector);
CREATE INDEX messages_scope_trgm_idx ON messages
  USING gin (owner_id, session_id, (content || coalesce(' ' || tool_text, '')) gin_trgm_ops);
CREATE INDEX messages_scope_time_idx ON messages (owner_id, profile_id, created_at);

-- The sessions a person sees without owning them: those of a chat type the profile shares.
CREATE INDEX sessions_profile_chat_type_idx ON sessions (profile_id, chat_type);
