-- The youngest an audit entry can be and still be deleted: by the retention prune or by any
-- statement of any role that is subject to the trigger. Within it the trail is append-only without
-- exception, so whoever holds the database role cannot empty it (docs/security.md, "The audit
-- trail and the database role"). HERALD_AUDIT_RETENTION_DAYS may not be set below it.
CREATE OR REPLACE FUNCTION herald_audit_min_age() RETURNS interval
LANGUAGE sql IMMUTABLE AS $$ SELECT interval '30 days' $$;
