-- The words of a message's tool calls (each call's name and arguments), for herald_tool_text. Its
-- own function so that herald_tool_text has no sub-select: Postgres inlines a SQL function only
-- without one, and herald_tool_text runs twice per inserted message (two generated columns), so
-- the plain chat messages that make up most of a history never pay for this query.
-- plpgsql, not sql: a sql function with a FROM is never inlined, and was planned again for every
-- message with tool calls; plpgsql keeps the plan for the connection.
CREATE OR REPLACE FUNCTION herald_tool_calls_text(p_tool_calls jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT string_agg(concat_ws(' ', call ->> 'name', call ->> 'arguments'), ' ')
            FROM jsonb_array_elements(p_tool_calls) AS call);
END $$;
