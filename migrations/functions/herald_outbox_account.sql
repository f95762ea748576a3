-- Names the account a session's outbox row leaves through (migrations/0070_platform_accounts.sql):
-- when the row is for the session's own platform and its target names no account, the session's
-- account is added (the default one is left implicit). A row for another platform (a handoff to a
-- home chat elsewhere) or one that names its account is left as written.
CREATE OR REPLACE FUNCTION herald_outbox_account() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_account text;
BEGIN
  IF NEW.session_id IS NULL OR NEW.target ? 'account' THEN
    RETURN NEW;
  END IF;
  SELECT s.account INTO v_account FROM sessions s WHERE s.id = NEW.session_id AND s.platform = NEW.platform;
  IF v_account IS NOT NULL AND v_account <> 'default' THEN
    NEW.target := NEW.target || jsonb_build_object('account', v_account);
  END IF;
  RETURN NEW;
END;
$$;
