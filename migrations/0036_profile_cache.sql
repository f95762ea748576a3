-- Processes cache each profile's stored hooks and reset rules (docs/decisions/2026-12-02-profile-cache.md):
-- every write of them notifies herald_profile_changed (migrations/functions/herald_profile_changed.sql),
-- so each process drops its copy when the write commits. Only the columns the cache holds are watched.
CREATE TRIGGER profile_hooks_changed AFTER INSERT OR UPDATE OR DELETE ON profile_hooks
  FOR EACH ROW EXECUTE FUNCTION herald_profile_changed('profile_id');
CREATE TRIGGER profile_hooks_truncated AFTER TRUNCATE ON profile_hooks
  FOR EACH STATEMENT EXECUTE FUNCTION herald_profile_changed('profile_id');
CREATE TRIGGER profiles_changed AFTER INSERT OR DELETE OR UPDATE OF id, session_reset ON profiles
  FOR EACH ROW EXECUTE FUNCTION herald_profile_changed('id');
CREATE TRIGGER profiles_truncated AFTER TRUNCATE ON profiles
  FOR EACH STATEMENT EXECUTE FUNCTION herald_profile_changed('id');
