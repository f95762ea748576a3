-- Several bots per platform (issue 31 point 6, docs/configuration.md#platform-accounts): a chat on
-- a named account has the account in its session key's platform part (`telegram@ops`), so the same
-- person on two bots has two conversations. The session's account is read from that key, in one
-- place, so every writer of sessions (routing, compression, handoff) keeps it right without knowing.
ALTER TABLE sessions ADD COLUMN account text GENERATED ALWAYS AS (
  CASE WHEN split_part(session_key, ':', 3) LIKE '%@%'
       THEN split_part(split_part(session_key, ':', 3), '@', 2)
       ELSE 'default' END) STORED;

-- A message about a session (a reply, an approval prompt, a command's answer) leaves through the
-- account the conversation came in on: the outbox row's target names it unless its writer did.
CREATE TRIGGER outbox_account BEFORE INSERT ON outbox
  FOR EACH ROW EXECUTE FUNCTION herald_outbox_account();

-- A home chat (/sethome) is on the account it was set from: a handoff there leaves through that bot.
ALTER TABLE home_chats ADD COLUMN account text NOT NULL DEFAULT 'default';
