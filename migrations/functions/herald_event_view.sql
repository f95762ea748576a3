-- What the API shows of one accepted event (libs/session/src/event-view.ts getEvent): its status
-- and reply, the question or approval its turn is parked on, the budget warnings its turn gave, and
-- whether its turn failed (a turn the person ended with /stop is stored failed too, but they asked
-- for that end). The ingress reads it for every answer it waits on. plpgsql, not a statement sent
-- from the ingress: planning the join took 0.26 ms of every answer (pg_stat_statements with
-- track_planning, 2026-12-06); a function's plan is kept for the connection.
CREATE OR REPLACE FUNCTION herald_event_view(p_event uuid)
RETURNS TABLE (id uuid, session_id uuid, status text, reply_text text, error text, wait_id uuid, kind text, tool_name text,
               prompt text, choices jsonb, expires_at timestamptz, budget_warnings text[], turn_failed boolean)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
-- Lookups by key only (the event, its turn): one plan fits every call, as in herald_transcript_state.
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT e.id, e.session_id, e.status, e.reply_text, e.error, w.id, w.kind, w.tool_name, w.prompt, w.choices, w.expires_at,
           (SELECT array_agg(b.text ORDER BY b.created_at) FROM budget_warnings b WHERE b.turn_id = e.turn_id),
           EXISTS (SELECT 1 FROM turns t WHERE t.id = e.turn_id AND t.status = 'failed' AND t.error IS DISTINCT FROM 'stopped')
    FROM inbound_events e
    LEFT JOIN tool_waits w ON w.turn_id = e.turn_id AND w.status = 'pending'
    WHERE e.id = p_event;
END $$;
