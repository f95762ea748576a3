-- A skill shared with everyone in its profile, or taken back to its owner, in the audit trail: the
-- actor is the transaction's 'herald.actor' (the operator, through the API, CLI or console), else
-- the skill's owner, whose own change took it back (migration 0046).
CREATE OR REPLACE FUNCTION herald_audit_skill_share() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_log (kind, actor, profile_id, subject, detail)
  VALUES ('admin_change', coalesce(nullif(current_setting('herald.actor', true), ''), NEW.owner_id), NEW.profile_id, 'skill:' || NEW.name,
          jsonb_build_object('op', CASE WHEN NEW.shared THEN 'share' ELSE 'unshare' END, 'version', NEW.version, 'owner', NEW.owner_id));
  RETURN NULL;
END $$;
