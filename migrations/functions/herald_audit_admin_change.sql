-- Admin changes in the audit trail, written by the statement that makes them whatever path it
-- comes from (the API, the CLI, a model's cronjob or memory tool, the reviewer): cron jobs,
-- skill versions, skill pins, memory entries and profile documents. The actor is the transaction's 'herald.actor' setting when
-- a caller set one, else what the row itself says (a job's creator, a skill version's author).
-- Memory content is never copied: the entry id, store and whose memory it is.
CREATE OR REPLACE FUNCTION herald_audit_admin_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  actor text := nullif(current_setting('herald.actor', true), '');
BEGIN
  r := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  IF TG_TABLE_NAME = 'cron_jobs' THEN
    INSERT INTO audit_log (kind, actor, profile_id, subject, detail)
    VALUES ('admin_change', coalesce(actor, CASE WHEN TG_OP = 'INSERT' THEN r.creator_user_id END), r.profile_id, 'cron:' || r.id,
            jsonb_build_object('op', lower(TG_OP), 'name', r.name, 'schedule', r.schedule, 'enabled', r.enabled));
  ELSIF TG_TABLE_NAME = 'skill_versions' THEN
    INSERT INTO audit_log (kind, actor, profile_id, subject, detail)
    VALUES ('admin_change', coalesce(actor, r.author), r.profile_id, 'skill:' || r.name,
            jsonb_build_object('op', r.action, 'version', r.version));
  ELSIF TG_TABLE_NAME = 'skills' THEN
    INSERT INTO audit_log (kind, actor, profile_id, subject, detail)
    VALUES ('admin_change', actor, r.profile_id, 'skill:' || r.name,
            jsonb_build_object('op', CASE WHEN r.pinned THEN 'pin' ELSE 'unpin' END, 'version', r.version));
  ELSIF TG_TABLE_NAME = 'profile_documents' THEN
    -- The document's name, never its text.
    INSERT INTO audit_log (kind, actor, profile_id, subject, detail)
    VALUES ('admin_change', actor, r.profile_id, 'profile:' || r.profile_id,
            jsonb_build_object('op', lower(TG_OP), 'document', r.name));
  ELSIF TG_TABLE_NAME = 'memory_entries' THEN
    INSERT INTO audit_log (kind, actor, profile_id, subject, detail)
    VALUES ('admin_change', actor, r.profile_id, 'memory:' || r.id,
            jsonb_build_object('op', lower(TG_OP), 'store', r.store, 'user_id', r.user_id));
  END IF;
  RETURN NULL;
END;
$$;
