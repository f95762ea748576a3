-- A session whose profile, owner or platform changes (a migration that qualifies user ids, an
-- admin fix) takes its messages' copies along, so search never answers from a stale owner. Only
-- the messages the old starter owned follow a new starter: another person's words stay theirs.
CREATE OR REPLACE FUNCTION herald_session_scope_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE messages m
     SET profile_id = NEW.profile_id,
         owner_id = CASE WHEN m.owner_id IS NOT DISTINCT FROM OLD.origin_user_id THEN NEW.origin_user_id ELSE m.owner_id END,
         platform = NEW.platform
   WHERE m.session_id = NEW.id;
  RETURN NULL;
END $$;
