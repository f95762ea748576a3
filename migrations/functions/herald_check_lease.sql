-- Every write of a turn is one function call (one round trip instead of a transaction of five to
-- eight statements) with this lease check inside: raises HL001 when the caller's fencing token is
-- no longer the session's (docs/decisions/2026-11-30-turn-functions.md).
CREATE OR REPLACE FUNCTION herald_check_lease(p_session uuid, p_token bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT herald_lease_held(p_session, p_token) THEN
    RAISE EXCEPTION 'lease on session % was lost', p_session USING ERRCODE = 'HL001';
  END IF;
END $$;
