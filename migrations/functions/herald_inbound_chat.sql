-- An accepted message or command remembers the chat it arrived in (its session's route key then),
-- whichever path inserted it: search lets a group member see the messages of the chats they wrote
-- in (libs/search/src/search-scope.ts), not whatever a handoff later moved the session into.
CREATE OR REPLACE FUNCTION herald_inbound_chat() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  SELECT s.session_key INTO NEW.chat_key FROM sessions s WHERE s.id = NEW.session_id;
  RETURN NEW;
END $$;
