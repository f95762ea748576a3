-- A tool step's results under the lease, with the audit entries of the calls that made them, in one
-- round trip: a result is never stored without its entry, nor an entry without its result (the
-- statement is atomic). Before, the same writes took a transaction of four statements.
CREATE OR REPLACE FUNCTION herald_record_results(p_session uuid, p_token bigint, p_turn uuid, p_messages jsonb, p_audit jsonb)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM herald_record_step(p_session, p_token, p_turn, p_messages, NULL);
  PERFORM herald_append_audit(p_audit);
END $$;
