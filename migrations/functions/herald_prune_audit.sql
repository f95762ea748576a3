-- The retention sweep: deletes audit entries older than the given number of days, never younger
-- than herald_audit_min_age() (the trigger would refuse them; a smaller number prunes nothing
-- more). Returns the count.
CREATE OR REPLACE FUNCTION herald_prune_audit(retention_days integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
BEGIN
  DELETE FROM audit_log
   WHERE at < clock_timestamp() - GREATEST(retention_days * interval '1 day', herald_audit_min_age());
  GET DIAGNOSTICS removed = ROW_COUNT;
  RETURN removed;
END;
$$;
