-- Claims a session's lease if it is free or expired (libs/leases/src/leases.ts claimLease): the
-- lease row with its next fencing token, whether the previous holder never released it (a crash
-- takeover), the session's wake generation bumped under its row lock, what the worker needs of the
-- session and its profile, and the session's inbox as herald_open_inbox reads it after the bump.
-- No row when a live holder has the lease. plpgsql, not a statement sent from the worker: the
-- statement joins five tables and took 0.25 ms to plan on every claim (pg_stat_statements with
-- track_planning, 2026-12-06); a function's plan is kept for the connection.
CREATE OR REPLACE FUNCTION herald_claim_lease(p_session uuid, p_owner text, p_ttl_ms bigint, p_limit integer)
RETURNS TABLE (token bigint, took_over boolean, wake_generation bigint, system_prompt text, platform text, chat_type text,
               profile_id text, origin_user_id text, identity text, tool_policy jsonb,
               queue_mode text, parked boolean, id uuid, text text, user_id text, user_name text, status text,
               turn_id uuid, released boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH previous AS (
      SELECT NOT l.released AS unreleased FROM session_leases l WHERE l.session_id = p_session
    ), claimed AS (
      INSERT INTO session_leases AS l (session_id, owner, token, expires_at, released)
      VALUES (p_session, p_owner, 1, clock_timestamp() + p_ttl_ms * interval '1 millisecond', false)
      ON CONFLICT (session_id) DO UPDATE
        SET owner = EXCLUDED.owner, token = l.token + 1, expires_at = EXCLUDED.expires_at, released = false
        WHERE l.expires_at <= clock_timestamp()
      RETURNING l.token, (SELECT unreleased FROM previous) AS took_over
    ), bumped AS (
      UPDATE sessions s SET wake_generation = s.wake_generation + 1
      WHERE s.id = p_session AND EXISTS (SELECT 1 FROM claimed)
      RETURNING s.id, s.wake_generation, s.system_prompt, s.platform, s.chat_type, s.profile_id, s.origin_user_id
    )
    SELECT c.token, c.took_over, b.wake_generation, b.system_prompt, b.platform, b.chat_type, b.profile_id, b.origin_user_id,
           p.identity, p.tool_policy, i.queue_mode, i.parked, i.id, i.text, i.user_id, i.user_name, i.status, i.turn_id, i.released
    FROM claimed c CROSS JOIN bumped b JOIN profiles p ON p.id = b.profile_id
    CROSS JOIN LATERAL herald_open_inbox(b.id, NULL, p_limit) i;
END $$;
