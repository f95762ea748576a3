-- Profiles are managed (docs/decisions/2026-12-05-managed-profiles.md): a profile is deleted softly
-- (its sessions and history stay readable; it takes no new messages and is not listed), and it may
-- name its own models (`{primary, fallbacks, summary, delegation, context_tokens}`, provider/model
-- references checked by the API against the declared providers; keys are never stored).
ALTER TABLE profiles ADD COLUMN deleted_at timestamptz;
ALTER TABLE profiles ADD COLUMN model jsonb;

-- Every process caches a profile's model chain: a change of the models, or a deletion, tells them.
DROP TRIGGER profiles_changed ON profiles;
CREATE TRIGGER profiles_changed AFTER INSERT OR DELETE OR UPDATE OF id, session_reset, model, deleted_at ON profiles
  FOR EACH ROW EXECUTE FUNCTION herald_profile_changed('id');
