-- What one person writes never enters another person's prompt unreviewed (docs/security.md,
-- "Skills: who sees what"). A skill a person's session or a review of their chat creates or
-- changes belongs to that person (owner_id) and is not shared until an operator shares it, or the
-- profile opts into auto-sharing. Skills that existed before are shared: everyone saw them already.
ALTER TABLE skills ADD COLUMN shared boolean NOT NULL DEFAULT true;
ALTER TABLE skills ALTER COLUMN shared SET DEFAULT false;
ALTER TABLE skills ADD COLUMN owner_id text;
ALTER TABLE profiles ADD COLUMN auto_share_skills boolean NOT NULL DEFAULT false;

-- Who shared what, whichever path changed it (herald.actor names the operator).
CREATE TRIGGER skills_share_audit AFTER UPDATE OF shared ON skills
  FOR EACH ROW WHEN (OLD.shared IS DISTINCT FROM NEW.shared) EXECUTE FUNCTION herald_audit_skill_share();
