-- A session's last message seq (0 when it has none): one backward step of the (session_id, seq)
-- index. Not max(seq): where the statistics say a session has few rows (a young table, a session
-- that grew since the last ANALYZE) the planner aggregates over all of the session's index entries
-- instead, so every append read the whole session (0.13 ms at 1,000 messages, growing with it).
-- plpgsql, not sql: a sql function with a sub-select is not inlined and was planned again in every
-- transaction; plpgsql keeps the plan for the connection.
CREATE OR REPLACE FUNCTION herald_last_seq(p_session uuid) RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_seq integer;
BEGIN
  SELECT m.seq INTO v_seq FROM messages m WHERE m.session_id = p_session ORDER BY m.seq DESC LIMIT 1;
  RETURN coalesce(v_seq, 0);
END $$;
