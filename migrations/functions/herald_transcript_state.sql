-- What the start of a turn reads of a session (libs/transcript/src/transcript.ts readState): the
-- session row joined to its messages after the caller's cached tail (all of them when p_tail_seq is
-- NULL), its compression counters, the prompt size of its last turn call, and whether the message
-- at the tail's seq still has the tail's id (a tail that is gone sends the reader back to a full
-- read). The last turn call in a LATERAL on the one session row, ordered as model_calls_session_idx
-- is (by id alone the planner walked the primary key back through every session's calls). plpgsql,
-- not a statement sent from the worker: planning the join took 0.29 ms of every turn
-- (pg_stat_statements with track_planning, 2026-12-06); a function's plan is kept for the connection.
CREATE OR REPLACE FUNCTION herald_transcript_state(p_session uuid, p_tail_seq integer, p_tail_id bigint)
RETURNS TABLE (id bigint, seq integer, turn_id uuid, role text, content text, tool_calls jsonb, tool_call_id text,
               tool_name text, created_at timestamptz, ineffective_compressions integer, parent_session_id uuid,
               last_input_tokens integer, tail_found boolean)
LANGUAGE plpgsql STABLE
-- Every lookup here is by key, so one plan fits every call; without this Postgres may judge a
-- custom plan cheaper on every call (a tail seq near the end looks selective) and plan each time.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT m.id, m.seq, m.turn_id, m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_name, m.created_at,
           s.ineffective_compressions, s.parent_session_id, c.input_tokens, v.tail_found
    FROM sessions s
    LEFT JOIN LATERAL (
      SELECT mc.input_tokens FROM model_calls mc WHERE mc.session_id = s.id AND mc.kind = 'turn'
      ORDER BY mc.created_at DESC, mc.id DESC LIMIT 1) c ON true
    CROSS JOIN LATERAL (SELECT p_tail_seq IS NULL
      OR EXISTS (SELECT 1 FROM messages k WHERE k.session_id = s.id AND k.seq = p_tail_seq AND k.id = p_tail_id) AS tail_found) v
    LEFT JOIN messages m ON m.session_id = s.id AND m.seq > coalesce(p_tail_seq, 0)
    WHERE s.id = p_session
    ORDER BY m.seq;
END $$;
