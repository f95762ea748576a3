-- Tool names and tool-call arguments, flattened to words. NULL for plain chat messages, so the
-- stored column costs nothing for them. IMMUTABLE because it feeds generated columns: changing
-- this function later needs a rewrite of messages (UPDATE messages SET tool_name = tool_name).
CREATE OR REPLACE FUNCTION herald_tool_text(p_tool_name text, p_tool_calls jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN p_tool_calls IS NULL OR jsonb_typeof(p_tool_calls) <> 'array' THEN p_tool_name
    ELSE concat_ws(' ', p_tool_name, (
      SELECT string_agg(concat_ws(' ', call ->> 'name', call ->> 'arguments'), ' ')
      FROM jsonb_array_elements(p_tool_calls) AS call))
  END
$$;
