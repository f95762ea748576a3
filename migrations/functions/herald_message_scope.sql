-- A message carries the scope fields of its session (profile, owner, platform), so history search
-- finds a person's messages inside composite indexes that start with the owner instead of reading
-- every person's matches and joining to sessions. The session is the one source of these values:
-- this trigger copies them on every insert that does not bring them (the turn functions, tests;
-- migration 0035), the Hermes import reads them from its sessions in bulk, and
-- herald_session_scope_moved follows a session whose fields change.
CREATE OR REPLACE FUNCTION herald_message_scope() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  SELECT s.profile_id, s.origin_user_id, s.platform
    INTO NEW.profile_id, NEW.owner_id, NEW.platform
    FROM sessions s WHERE s.id = NEW.session_id;
  RETURN NEW;
END $$;
