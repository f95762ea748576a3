-- Tells every process's profile cache (libs/db/src/profile-cache.ts) that a profile's stored hooks
-- or reset rules changed: NOTIFY herald_profile_changed with the profile id, delivered when the
-- writing transaction commits, whatever path the write came from (the API, the CLI, psql). The
-- trigger names the row's profile id column (TG_ARGV[0]); a TRUNCATE sends '' (every profile).
CREATE OR REPLACE FUNCTION herald_profile_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('herald_profile_changed', '');
    RETURN NULL;
  END IF;
  -- An update may move the row to another profile id: both ids are told.
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM pg_notify('herald_profile_changed', to_jsonb(OLD) ->> TG_ARGV[0]);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM pg_notify('herald_profile_changed', to_jsonb(NEW) ->> TG_ARGV[0]);
  END IF;
  RETURN NULL;
END;
$$;
