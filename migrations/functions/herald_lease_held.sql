-- Whether the caller's fencing token is still the session's live lease, taking the lease row FOR
-- SHARE: a competing claim must lock this row, so it waits until the caller's transaction ends.
-- herald_check_lease raises on false (inside the turn functions); fenced() in libs/leases asks it
-- before a transaction's writes. plpgsql, so the lookup's plan is kept for the connection.
CREATE OR REPLACE FUNCTION herald_lease_held(p_session uuid, p_token bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM session_leases
    WHERE session_id = p_session AND token = p_token AND expires_at > clock_timestamp()
    FOR SHARE;
  RETURN FOUND;
END $$;
