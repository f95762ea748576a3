-- A person's erasure (`herald people erase`): their messages, what their turns were sent and
-- answered, the prompts their memory was frozen into, their memory, cron jobs, tokens and
-- identities, in the caller's transaction. Their usage counts stay (numbers, no content).
-- Returns how many messages and memory entries went, for the caller's summary, never their text.
CREATE OR REPLACE FUNCTION herald_erase_person(person uuid, keys text[]) RETURNS TABLE (messages bigint, memory bigint)
LANGUAGE plpgsql AS $$
DECLARE
  gone_messages bigint;
  gone_memory bigint;
BEGIN
  DELETE FROM messages m
   WHERE m.owner_id = ANY (keys)
      OR m.session_id IN (SELECT s.id FROM sessions s WHERE s.origin_user_id = ANY (keys));
  GET DIAGNOSTICS gone_messages = ROW_COUNT;
  UPDATE sessions SET system_prompt = NULL, title = NULL WHERE origin_user_id = ANY (keys);
  UPDATE inbound_events SET text = '', reply_text = NULL, user_name = NULL WHERE user_id = ANY (keys);
  DELETE FROM memory_entries WHERE user_id = ANY (keys);
  GET DIAGNOSTICS gone_memory = ROW_COUNT;
  DELETE FROM cron_jobs WHERE creator_user_id = ANY (keys);
  DELETE FROM people WHERE id = person;
  RETURN QUERY SELECT gone_messages, gone_memory;
END;
$$;
