-- The scope trigger (0024, functions/herald_message_scope.sql) runs only for rows that arrive
-- without their session's scope. The turn functions insert without it and keep the per-row copy;
-- the Hermes import reads the scope of its sessions once and COPYs it with each message, because a
-- PL/pgSQL call and a session lookup per row were a large share of importing a million messages.
DROP TRIGGER messages_scope ON messages;
CREATE TRIGGER messages_scope BEFORE INSERT ON messages
  FOR EACH ROW WHEN (NEW.profile_id IS NULL) EXECUTE FUNCTION herald_message_scope();
