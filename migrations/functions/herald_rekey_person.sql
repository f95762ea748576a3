-- A linked identity's past joins its person (docs/decisions/2026-12-06-person-key.md): everything
-- that names a person by user id moves from the identity to the person's key, so memory, history
-- search (through sessions_scope_moved), quotas and cron jobs are one. Run in the transaction that
-- links the identity; usage of the same day is added up, not duplicated.
CREATE OR REPLACE FUNCTION herald_rekey_person(from_id text, to_id text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF from_id = to_id THEN RETURN; END IF;
  UPDATE sessions SET origin_user_id = to_id WHERE origin_user_id = from_id;
  UPDATE inbound_events SET user_id = to_id WHERE user_id = from_id;
  UPDATE memory_entries SET user_id = to_id WHERE user_id = from_id;
  UPDATE cron_jobs SET creator_user_id = to_id WHERE creator_user_id = from_id;
  UPDATE skills SET created_by = to_id WHERE created_by = from_id;
  INSERT INTO usage_days AS u (day, user_id, tokens, attachment_bytes)
    SELECT day, to_id, tokens, attachment_bytes FROM usage_days WHERE user_id = from_id
    ON CONFLICT (day, user_id) DO UPDATE
      SET tokens = u.tokens + EXCLUDED.tokens, attachment_bytes = u.attachment_bytes + EXCLUDED.attachment_bytes;
  DELETE FROM usage_days WHERE user_id = from_id;
END;
$$;
