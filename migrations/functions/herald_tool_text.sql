-- Tool names and tool-call arguments, flattened to words. NULL for plain chat messages, so the
-- stored column costs nothing for them. IMMUTABLE because it feeds generated columns: changing
-- what it returns later needs a rewrite of messages (UPDATE messages SET tool_name = tool_name).
-- No sub-select here (the calls' words are herald_tool_calls_text) and only immutable functions,
-- so Postgres inlines it into the generated columns instead of planning and running a query per
-- message: a Hermes import of a million messages spent a third of its insert time in this function
-- before. concat_ws is only stable (it formats any type), and an immutable function that calls
-- one is not inlined: the last branch spells concat_ws(' ', name, words) with ||, same result.
CREATE OR REPLACE FUNCTION herald_tool_text(p_tool_name text, p_tool_calls jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN p_tool_calls IS NULL OR jsonb_typeof(p_tool_calls) <> 'array' THEN p_tool_name
    WHEN p_tool_name IS NULL THEN coalesce(herald_tool_calls_text(p_tool_calls), '')
    ELSE p_tool_name || coalesce(' ' || herald_tool_calls_text(p_tool_calls), '')
  END
$$;
