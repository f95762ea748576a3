-- Search scope by message, not by session (docs/decisions/2026-12-05-message-scope.md).
-- A message belongs to the person who wrote it or to whom it answered (owner_id), and remembers the
-- chat it was written in (chat_key, the session's route key at that moment), so a handoff that
-- moves a session into another chat moves no one's later words into the scope of whoever started
-- it. inbound_events remember the chat too: a group member sees the group's messages of the chats
-- they wrote in, not what the session says after it left them.
ALTER TABLE messages ADD COLUMN chat_key text;
ALTER TABLE inbound_events ADD COLUMN chat_key text;
-- The person a turn answers: the author of its first message (herald_start_turn).
ALTER TABLE turns ADD COLUMN addressed_to text;

UPDATE turns t
   SET addressed_to = first.user_id
  FROM (SELECT DISTINCT ON (e.turn_id) e.turn_id, e.user_id
          FROM inbound_events e WHERE e.turn_id IS NOT NULL
         ORDER BY e.turn_id, e.received_at, e.id) first
 WHERE first.turn_id = t.id;

UPDATE messages m SET chat_key = s.session_key FROM sessions s WHERE s.id = m.session_id;
UPDATE inbound_events e SET chat_key = s.session_key FROM sessions s WHERE s.id = e.session_id;

UPDATE messages m
   SET owner_id = t.addressed_to
  FROM turns t
 WHERE t.id = m.turn_id AND t.addressed_to IS NOT NULL AND m.owner_id IS DISTINCT FROM t.addressed_to;

CREATE TRIGGER inbound_events_chat BEFORE INSERT ON inbound_events
  FOR EACH ROW WHEN (NEW.chat_key IS NULL) EXECUTE FUNCTION herald_inbound_chat();

-- Whether an operator asked for the handoff (the API, or a HERALD_OPERATORS member): only then, or
-- when it is the requester's own, does the home chat's current session end; anyone else's is set
-- aside unended (libs/handoff/src/handoff.ts).
ALTER TABLE session_handoffs ADD COLUMN by_operator boolean NOT NULL DEFAULT false;
