-- The retention sweep: deletes audit entries older than the given number of days, the only delete
-- herald_audit_append_only lets through (the mark is local to this transaction). Returns the count.
CREATE OR REPLACE FUNCTION herald_prune_audit(retention_days integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
BEGIN
  PERFORM set_config('herald.audit_prune', 'on', true);
  DELETE FROM audit_log WHERE at < clock_timestamp() - retention_days * interval '1 day';
  GET DIAGNOSTICS removed = ROW_COUNT;
  PERFORM set_config('herald.audit_prune', 'off', true);
  RETURN removed;
END;
$$;
