-- History search: the database keeps the indexes current on every append, so no worker can forget.

-- Tool names and tool-call arguments, flattened to words. NULL for plain chat messages, so the
-- stored column costs nothing for them. IMMUTABLE because it feeds generated columns: changing
-- this function later needs a rewrite of messages (UPDATE messages SET tool_name = tool_name).
CREATE FUNCTION herald_tool_text(p_tool_name text, p_tool_calls jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN p_tool_calls IS NULL OR jsonb_typeof(p_tool_calls) <> 'array' THEN p_tool_name
    ELSE concat_ws(' ', p_tool_name, (
      SELECT string_agg(concat_ws(' ', call ->> 'name', call ->> 'arguments'), ' ')
      FROM jsonb_array_elements(p_tool_calls) AS call))
  END
$$;

ALTER TABLE messages
  ADD COLUMN tool_text text GENERATED ALWAYS AS (herald_tool_text(tool_name, tool_calls)) STORED,
  -- English stemming ("deploying" finds "deployment"). A generated column cannot read another
  -- one, so it calls the function again; both run once per insert, never per query.
  ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('english'::regconfig, content || coalesce(' ' || herald_tool_text(tool_name, tool_calls), ''))
  ) STORED;

CREATE INDEX messages_search_vector_idx ON messages USING gin (search_vector);

-- Substring search (CJK, short words, code fragments). Queries must spell this exact expression;
-- libs/session/src/history-search.ts keeps it in one constant.
CREATE INDEX messages_search_trgm_idx ON messages
  USING gin ((content || coalesce(' ' || tool_text, '')) gin_trgm_ops);

-- Scope lookups: a person's sessions in a profile, and the sessions they wrote in (group chats).
CREATE INDEX sessions_profile_user_idx ON sessions (profile_id, origin_user_id);
CREATE INDEX inbound_events_user_idx ON inbound_events (user_id, session_id);

-- Chat types whose sessions everyone in the profile may search (e.g. '{group,channel}').
-- Empty by default: a person searches only the sessions they started or wrote in.
ALTER TABLE profiles ADD COLUMN search_shared_chat_types text[] NOT NULL DEFAULT '{}';
