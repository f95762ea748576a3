-- A message carries the scope fields history search reads (profile, owner, platform, chat), so
-- search finds a person's messages inside composite indexes that start with the owner instead of
-- reading every person's matches and joining to sessions. The profile and platform are the
-- session's; the owner is who wrote the message or whom it answered, when the insert says so
-- (herald_append_messages: the author of a user message, the turn's addressee), else the session's
-- starter; the chat is the session's route key at this moment, so messages written after a
-- handoff belong to the chat they were written in (migration 0044). This trigger fills what an
-- insert does not bring (the turn functions, tests; migration 0035), the Hermes import reads them
-- from its sessions in bulk, and herald_session_scope_moved follows a session whose fields change.
CREATE OR REPLACE FUNCTION herald_message_scope() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  starter text;
BEGIN
  SELECT s.profile_id, s.origin_user_id, s.platform, s.session_key
    INTO NEW.profile_id, starter, NEW.platform, NEW.chat_key
    FROM sessions s WHERE s.id = NEW.session_id;
  NEW.owner_id := coalesce(NEW.owner_id, starter);
  RETURN NEW;
END $$;
