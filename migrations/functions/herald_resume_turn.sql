-- A crashed or handed-back turn taken up again; only a crash takeover counts against the budget.
CREATE OR REPLACE FUNCTION herald_resume_turn(p_session uuid, p_token bigint, p_turn uuid, p_worker text,
                                   p_count_attempt boolean) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  result integer;
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  UPDATE turns SET attempts = attempts + CASE WHEN p_count_attempt THEN 1 ELSE 0 END, worker = p_worker
    WHERE id = p_turn RETURNING attempts INTO result;
  RETURN result;
END $$;
