-- A session whose profile, owner or platform changes (a migration that qualifies user ids, an
-- admin fix) takes its messages' copies along, so search never answers from a stale owner.
CREATE OR REPLACE FUNCTION herald_session_scope_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE messages m
     SET profile_id = NEW.profile_id, owner_id = NEW.origin_user_id, platform = NEW.platform
   WHERE m.session_id = NEW.id;
  RETURN NULL;
END $$;
