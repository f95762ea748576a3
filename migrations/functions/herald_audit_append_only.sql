-- The audit trail is append-only: no statement may change an entry, or remove one younger than
-- herald_audit_min_age(), whoever runs it; there is no session setting or function that lifts
-- this (the retention prune deletes only what any DELETE could). TRUNCATE is refused outright.
CREATE OR REPLACE FUNCTION herald_audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.at < clock_timestamp() - herald_audit_min_age() THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'HA001';
END;
$$;
