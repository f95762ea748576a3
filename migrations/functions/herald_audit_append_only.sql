-- The audit trail is append-only: no statement may change or remove an entry, whoever runs it,
-- except the retention prune, which marks its own transaction (herald_prune_audit).
CREATE OR REPLACE FUNCTION herald_audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('herald.audit_prune', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'HA001';
END;
$$;
